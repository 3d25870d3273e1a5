#!/usr/bin/env python3
"""The plugin's `unwindkit` commands inside GDB, on the live twin program of test_gdb_live.py
stopped in its leaf, against tools no one here wrote:
- `unwindkit sframe dump` prints what `readelf --sframe` prints for the same file;
- `unwindkit sframe lookup $pc` names the function range `nm -S` gives for leaf();
- `unwindkit bt` (the core's own walker) gives GDB's PCs on the intact twin, frame for frame;
- `unwindkit sframe check` passes the file and reports a damaged one at the damaged offset;
- `help unwindkit` lists the subcommands; objfile arguments complete;
- `unwindkit set prefer sframe` on the intact twin (it keeps .eh_frame and has .sframe):
  before it the plugin claims no frame (GDB has CFI everywhere), after it the plugin claims
  frames, and `bt` is GDB's own (the plugin not sourced) both times."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gdb_cores import run_gdb  # noqa: E402
from test_gdb_live import _BT_PC, build_twins, leaf_breakpoint, live_bt  # noqa: E402
from test_gdb_bad_tables import sframe_file_offset  # noqa: E402


def between(out, start, end):
    return out.split(f"{start}\n", 1)[1].split(end, 1)[0]


_CLAIMED = re.compile(r"^frames claimed: (\d+)", re.MULTILINE)


def check_prefer(intact, address, want_pcs):
    """`unwindkit set prefer sframe` on a program with both .eh_frame and .sframe."""
    problems = []
    sections = subprocess.run(["readelf", "-SW", intact], check=True, capture_output=True,
                              text=True).stdout
    for name in (".eh_frame", ".sframe"):
        if not re.search(rf"\s{re.escape(name)}\s", sections):
            return [f"{intact} has no {name}: the prefer check proves nothing"]
    out = run_gdb("gdb", intact, commands=[
        f"break *{address:#x}", "run",
        "echo @@BT1\n", "bt", "echo @@ST1\n", "unwindkit status",
        "echo @@SET\n", "unwindkit set prefer sframe", "unwindkit show prefer",
        "echo @@BT2\n", "bt", "echo @@ST2\n", "unwindkit status",
        "echo @@END\n"])
    if "@@END" not in out:
        return [f"the prefer session did not finish:\n{out}"]
    for label, bt_marker, st_marker, end in (("prefer cfi", "@@BT1", "@@ST1", "@@SET"),
                                             ("prefer sframe", "@@BT2", "@@ST2", "@@END")):
        bt = between(out, bt_marker, st_marker)
        pcs = [int(pc, 16) for pc in _BT_PC.findall(bt)]
        if pcs != want_pcs:
            problems.append(f"{label}: bt PCs {[hex(p) for p in pcs]} differ from GDB's own "
                            f"{[hex(p) for p in want_pcs]}:\n{bt}")
        status = between(out, st_marker, end)
        claimed = _CLAIMED.search(status)
        if not claimed:
            problems.append(f"{label}: unwindkit status shows no `frames claimed`:\n{status}")
        elif label == "prefer cfi" and int(claimed.group(1)) != 0:
            problems.append(f"prefer cfi: frames claimed where GDB has CFI:\n{status}")
        elif label == "prefer sframe" and int(claimed.group(1)) == 0:
            problems.append(f"prefer sframe: no frame claimed:\n{status}")
        if label == "prefer sframe" and "prefer sframe" not in status:
            problems.append(f"status does not say `prefer sframe` after the set:\n{status}")
    if "prefers sframe" not in between(out, "@@SET", "@@BT2"):
        problems.append("unwindkit show prefer does not say sframe after the set")
    return problems


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
        problems += check_prefer(intact, address, want_pcs)
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
