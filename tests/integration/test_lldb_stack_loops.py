#!/usr/bin/env python3
"""LLDB plugin on a core whose frame-pointer chain loops (found by scripts/hostile: `unwindkit
bt` went round the loop until its 100,000-frame limit, rescanning LLDB's frame list at every
step, and never finished).

The C `.trace` program of test_trace_debuggers.py (frame pointers, .eh_frame kept, no .sframe:
every caller comes from LLDB's own frame list) is crashed to a core; the core's third saved
frame pointer is pointed back at the first record (stack memory patched in the core file).
`unwindkit bt` must finish well inside the time limit, stop where the stack loops, and list the frames
LLDB alone lists first on the same core (`bt 8`), each once.
"""
import os
import re
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import truth  # noqa: E402
from truth.tools import Skip  # noqa: E402
from lldb_plugin import Lldb, threads  # noqa: E402
from test_trace_debuggers import build  # noqa: E402
from hostile import elf_files, stack_loops  # noqa: E402

TIME_LIMIT = 100  # LLDB alone needs ~20 s to list the looping stack (600,000 frames)
_FRAME = re.compile(r"^#(\d+)\s+(0x[0-9a-f]+)", re.M)


def looped_core(core, out):
    data = bytearray(open(core, "rb").read())
    segments = elf_files.load_segments(core)
    _, _, rsp, rbp = stack_loops.threads(data)[0]
    chain = stack_loops._fp_chain(data, segments, rbp, rsp)
    if len(chain) < 3:
        raise RuntimeError(f"frame-pointer chain of {len(chain)} records: {chain}")
    struct.pack_into("<Q", data, elf_files.file_offset(segments, chain[2]), chain[0])
    with open(out, "wb") as f:
        f.write(data)


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "integration", "programs")
    with tempfile.TemporaryDirectory(prefix="uk-lldb-loops-") as work:
        try:
            _, stripped = build("c", work, src)
            core = truth.make_core(stripped, truth.X86_64)
            alone, ours = Lldb(plugin=False, timeout=TIME_LIMIT), Lldb(plugin=True,
                                                                       timeout=TIME_LIMIT)
        except Skip as e:
            print(f"SKIP: {e}")
            return 0
        looped = os.path.join(work, "core.looped")
        looped_core(core, looped)
        first = threads(alone.run(["bt 8"], stripped.exe, looped))[0]
        start = time.monotonic()
        out = ours.run(["unwindkit bt"], stripped.exe, looped)
        seconds = time.monotonic() - start
    pcs = [int(pc, 16) for _, pc in _FRAME.findall(out.split("(unwindkit)", 1)[-1])]
    problems = []
    # The core's walker ends a loop at (pc, cfa) seen again, or at a CFA that goes back down
    # the stack (below the SP, or not above the previous CFA).
    if not re.search(r"stopped: (cycle:|no usable unwind rule.*(does not move up the stack|"
                     r"is below SP))", out):
        problems.append(f"unwindkit bt does not say the stack loops:\n{out[-1500:]}")
    if not pcs or pcs != first[:len(pcs)] or len(set(pcs)) != len(pcs):
        problems.append(f"unwindkit bt frames {[hex(p) for p in pcs]}, LLDB alone "
                        f"{[hex(p) for p in first]}")
    print(f"unwindkit bt: {len(pcs)} frames in {seconds:.1f} s (LLDB alone first: "
          f"{[hex(p) for p in first]})")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
