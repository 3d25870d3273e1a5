#!/usr/bin/env python3
"""GDB plugin with tables that decode but fail the strict checks: such a table must be left to
GDB, so that GDB's own unwinding comes through (found by scripts/hostile: opt_mix with its
.sframe zeroed from byte 156 on gave 2 frames with the plugin where GDB alone gives 4).

opt_mix's stripped copy (truth harness) is crashed to a core; then its .sframe is damaged in
place, each damage one that `unwindkit sframe dump` still decodes and `unwindkit sframe check`
rejects: the FRE sub-section zeroed from each 4th byte on, two FDEs swapped, one FDE copied
over the next. For each, `thread apply all bt` with the plugin must list exactly the frames
GDB alone lists on the same file and core, and `unwindkit status` must claim no frame and
name a byte offset in .sframe.
"""
import os
import re
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import truth  # noqa: E402
from truth.tools import Skip, run  # noqa: E402
from hostile import debuggers, elf_files  # noqa: E402
from hostile.sframe_mutations import Layout  # noqa: E402


def damages(section):
    layout = Layout(section)
    end = layout.fres + layout.fre_len
    for at in range(layout.fres, end, 4):
        yield f"FRE sub-section zeroed from byte {at}", section[:at] + bytes(len(section) - at)
    a, b, n = layout.fde(0), layout.fde(1), layout.fde_size
    yield "FDEs 0 and 1 swapped", section[:a] + section[b:b + n] + section[a:a + n] + section[b + n:]
    yield "FDE 0 copied over FDE 1", section[:b] + section[a:a + n] + section[b + n:]


def damaged_copies(exe, work, unwindkit):
    """(what, path) of a copy of `exe` for each damage that `unwindkit sframe dump` still
    decodes and `unwindkit sframe check` rejects; the same path is rewritten each time."""
    offset, size = elf_files.section(exe, ".sframe")
    image = open(exe, "rb").read()
    if struct.unpack_from("<H", image, offset)[0] != 0xDEE2:
        raise RuntimeError(f"{exe}: .sframe does not start with the SFrame magic")
    damaged = os.path.join(work, "prog")
    for what, section in damages(image[offset:offset + size]):
        with open(damaged, "wb") as f:
            f.write(image[:offset] + section + image[offset + size:])
        os.chmod(damaged, 0o755)
        if run([unwindkit, "sframe", "dump", damaged], check=False).returncode != 0 or \
                run([unwindkit, "sframe", "check", damaged], check=False).returncode == 0:
            continue  # not the kind of damage these tests are about
        yield what, damaged


def main():
    unwindkit = os.environ["UNWINDKIT"]
    build_dir = os.environ["UNWINDKIT_BUILD_DIR"]
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    case = next(c for c in truth.cases_for("x86_64") if c.name == "opt_mix")
    problems, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="uk-gdb-checked-") as work:
        try:
            stripped = truth.build_pair(case, truth.X86_64, work, src).stripped
            core = truth.make_core(stripped, truth.X86_64)
        except Skip as e:
            print(f"SKIP: {e}")
            return 0
        alone = debuggers.gdb(build_dir, stripped.exe, core, False, 120).threads
        for what, damaged in damaged_copies(stripped.exe, work, unwindkit):
            checked += 1
            o = debuggers.gdb(build_dir, damaged, core, True, 120)
            status = o.output.split("unwinder unwindkit", 1)[-1]
            if o.crashed or o.hung:
                problems.append(f"{what}: GDB {'hung' if o.hung else o.crashed}")
            elif o.threads != alone:
                problems.append(f"{what}: frames per thread {[len(t) for t in o.threads]} with "
                                f"the plugin, {[len(t) for t in alone]} from GDB alone")
            elif "frames claimed: 0;" not in status or not re.search(r"\.sframe\+0x", status):
                problems.append(f"{what}: status does not show the table left alone:\n"
                                f"{status[:800]}")
            else:
                print(f"ok   {what}")
    if checked < 3:
        problems.append(f"only {checked} damages decoded and failed the checks")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
