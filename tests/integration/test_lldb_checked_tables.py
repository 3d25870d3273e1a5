#!/usr/bin/env python3
"""LLDB plugin's `unwindkit bt` with tables that decode but fail the strict checks: the core's
walker, which `unwindkit bt` now is, must not take a single rule from such a table (issue R:
before, the LLDB walk used every table that decoded), while it still unwinds from the intact
table.

opt_mix's stripped copy (truth harness) is crashed to a core; `unwindkit bt` on it must show
frames unwound by SFrame (`[sframe]`), or the test proves nothing. Then its .sframe is damaged
in place, each damage one that `unwindkit sframe dump` still decodes and `unwindkit sframe
check` rejects (the damages of test_gdb_checked_tables.py): `unwindkit bt` on the same core must
show no `[sframe]` frame, and start at the frame LLDB alone shows first on that core.
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import truth  # noqa: E402
from truth.tools import Skip  # noqa: E402
from lldb_plugin import Lldb, threads  # noqa: E402
from test_gdb_checked_tables import damaged_copies  # noqa: E402

_FRAME = re.compile(r"^#\d+\s+(0x[0-9a-f]+)\s.*\[([a-z-]+)\]", re.M)


def our_frames(lldb, exe, core):
    out = lldb.run(["unwindkit bt"], exe, core)
    return [(int(pc, 16), source) for pc, source in _FRAME.findall(out.split("(unwindkit)", 1)[-1])], out


def main():
    unwindkit = os.environ["UNWINDKIT"]
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    case = next(c for c in truth.cases_for("x86_64") if c.name == "opt_mix")
    problems, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="uk-lldb-checked-") as work:
        try:
            stripped = truth.build_pair(case, truth.X86_64, work, src).stripped
            core = truth.make_core(stripped, truth.X86_64)
            ours, alone = Lldb(plugin=True), Lldb(plugin=False)
        except Skip as e:
            print(f"SKIP: {e}")
            return 0
        intact, text = our_frames(ours, stripped.exe, core)
        if not any(source == "sframe" for _, source in intact):
            problems.append(f"no [sframe] frame on the intact table: the test proves nothing\n{text}")
        for what, damaged in damaged_copies(stripped.exe, work, unwindkit):
            checked += 1
            frames, text = our_frames(ours, damaged, core)
            native = threads(alone.run(["bt"], damaged, core))[0]
            pcs = [pc for pc, _ in frames]
            if not frames:
                problems.append(f"{what}: unwindkit bt printed no frame:\n{text}")
            elif any(source == "sframe" for _, source in frames):
                problems.append(f"{what}: a rule came from the damaged table:\n{text}")
            elif not native or pcs[0] != native[0]:
                problems.append(f"{what}: frame #0 {hex(pcs[0])} is not LLDB's own "
                                f"{[hex(p) for p in native[:1]]}:\n{text}")
            else:
                print(f"ok   {what}: {len(frames)} frames, none from .sframe")
    if checked < 3:
        problems.append(f"only {checked} damages decoded and failed the checks")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
