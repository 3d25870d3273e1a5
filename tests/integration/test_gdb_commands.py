#!/usr/bin/python3.11
"""The plugin's `unwindkit` commands inside GDB, on the live twin program of test_gdb_live.py
stopped in its leaf, against tools no one here wrote:
- `unwindkit sframe dump` prints what `readelf --sframe` prints for the same file;
- `unwindkit sframe lookup $pc` names the function range `nm -S` gives for leaf();
- `unwindkit bt` (the core's own walker) gives GDB's PCs on the intact twin, frame for frame;
- `unwindkit sframe check` passes the file and reports a damaged one at the damaged offset;
- `help unwindkit` lists the subcommands; objfile arguments complete."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gdb_cores import run_gdb  # noqa: E402
from test_gdb_live import build_twins, leaf_breakpoint, live_bt  # noqa: E402
from test_gdb_bad_tables import sframe_file_offset  # noqa: E402


def between(out, start, end):
    return out.split(f"{start}\n", 1)[1].split(end, 1)[0]


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-gdb-cmd-") as work:
        intact, stripped = build_twins(work)
        address = leaf_breakpoint(intact)
        want_pcs, _, _ = live_bt(intact, address, plugin=False)
        out = run_gdb("gdb", stripped, commands=[
            f"break *{address:#x}", "run",
            "echo @@DUMP\\n", "unwindkit sframe dump",
            "echo @@LOOKUP\\n", "unwindkit sframe lookup $pc",
            "echo @@BT\\n", "unwindkit bt",
            "echo @@CHECK\\n", "unwindkit sframe check",
            "echo @@HELP\\n", "help unwindkit",
            "echo @@COMPLETE\\n", "complete unwindkit sframe dump libc",
            "echo @@END\\n"])
        readelf = subprocess.run(["readelf", "--sframe", stripped], check=True,
                                 capture_output=True, text=True).stdout
        nm = subprocess.run(["nm", "-S", intact], check=True, capture_output=True,
                            text=True).stdout

        base = sframe_file_offset(stripped)
        damaged = stripped + ".damaged"
        image = bytearray(open(stripped, "rb").read())
        image[base + 2] = 9  # sfp_version
        with open(damaged, "wb") as f:
            f.write(image)
        bad = run_gdb("gdb", stripped, commands=["echo @@CHECK\\n",
                                                 f"unwindkit sframe check {damaged}",
                                                 "echo @@END\\n"])

    dump = between(out, "@@DUMP", "@@LOOKUP")
    expected_dump = readelf[readelf.index("Contents of the SFrame section"):]
    if dump.strip() != expected_dump.strip():
        problems.append(f"sframe dump differs from readelf --sframe:\n{dump}\n---\n{expected_dump}")

    leaf = re.search(r"^([0-9a-f]+) ([0-9a-f]+) T leaf$", nm, re.MULTILINE)
    start, size = int(leaf.group(1), 16), int(leaf.group(2), 16)
    lookup = between(out, "@@LOOKUP", "@@BT")
    if f"function [{start:#x}, {start + size:#x})" not in lookup:
        problems.append(f"lookup does not give leaf's range [{start:#x}, {start + size:#x}):\n"
                        f"{lookup}")

    bt = between(out, "@@BT", "@@CHECK")
    ours = [int(pc, 16) for pc in re.findall(r"^#\d+\s+(0x[0-9a-f]+)", bt, re.MULTILINE)]
    # GDB's bt stops at main; ours goes on into libc.
    if len(want_pcs) < 7 or ours[:len(want_pcs)] != want_pcs:
        problems.append(f"unwindkit bt differs from GDB on the intact twin {want_pcs}:\n{bt}")

    check = between(out, "@@CHECK", "@@HELP")
    if ".sframe OK" not in check:
        problems.append(f"check of an intact table does not pass:\n{check}")
    bad_check = between(bad, "@@CHECK", "@@END")
    if ".sframe+0x2" not in bad_check:
        problems.append(f"check of a damaged version byte does not name offset 0x2:\n{bad_check}")

    help_text = between(out, "@@HELP", "@@COMPLETE")
    for sub in ("status", "sframe", "bt", "set", "show"):
        if not re.search(rf"^unwindkit {sub} -- ", help_text, re.MULTILINE):
            problems.append(f"help unwindkit does not list {sub}:\n{help_text}")
    completions = between(out, "@@COMPLETE", "@@END")
    if "unwindkit sframe dump libc.so.6" not in completions:
        problems.append(f"objfile completion does not offer libc.so.6:\n{completions}")

    for p in problems:
        print("FAIL", p)
    print(f"{len(problems)} command checks failed" if problems else "all command checks passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
