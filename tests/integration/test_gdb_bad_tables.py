#!/usr/bin/env python3
"""GDB plugin with broken tables: the stripped program's .sframe is damaged on disk (one byte
or field changed at an offset chosen here), then run under GDB to a breakpoint in a leaf with
the plugin sourced. GDB must stay up, `bt` must still print, and `unwindkit status` must name
the problem with the byte offset inside .sframe where it lies.

One more table is valid but costly (repeated_rows.py: a 2 MB PCMASK function repeating its
first row every byte, 2 M rows in a side file): the plugin makes no side file, says why in
`unwindkit status` (the FDE's offset and `rep_size`), and its own unwinder, which repeats no
rows, does the program's frames."""
import os
import re
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from repeated_rows import repeated_rows_program, sframe_file_offset  # noqa: E402
from test_gdb_cores import run_gdb  # noqa: E402
from test_gdb_live import build_twins, leaf_breakpoint  # noqa: E402

# (what, offset in .sframe of the damaged field, bytes written there). Header offsets from
# binutils' sframe.h: sfp_version at byte 2, sfh_num_fdes at 8, sfh_fre_len at 16.
DAMAGE = [
    ("unknown version", 2, bytes([9])),
    ("more functions than the section holds", 8, struct.pack("<I", 0x00ffffff)),
    ("FRE sub-section longer than the section (truncated)", 16, struct.pack("<I", 0x00ffffff)),
]


def bt_and_status(exe, address, what, problems):
    """GDB's `bt` and `unwindkit status` at the breakpoint, with the plugin; (None, None) and a
    problem when GDB did not get through them."""
    out = run_gdb("gdb", exe, commands=[
        f"break *{address:#x}", "run", "echo @@BT\\n", "bt", "echo @@STATUS\\n",
        "unwindkit status", "echo @@ALIVE\\n"])
    if "@@ALIVE" not in out:
        problems.append(f"{what}: GDB did not get through bt and status:\n{out[-2000:]}")
        return None, None
    return (out.split("@@BT\n", 1)[1].split("@@STATUS", 1)[0],
            out.split("@@STATUS\n", 1)[1].split("@@ALIVE", 1)[0])


def repeated_rows_case(work, problems):
    """The 2 MB function made PCMASK, repeating its first row every byte (repeated_rows.py)."""
    try:
        stripped, address, reason = repeated_rows_program(work)
    except AssertionError as e:
        problems.append(f"repeated rows: {e}")
        return
    bt, status = bt_and_status(stripped, address, "repeated rows", problems)
    if bt is None:
        return
    why = f"no side file: {reason}"
    if why not in status:
        problems.append(f"repeated rows: status does not say '{why}':\n{status}")
    elif not re.search(r"^#6\s+0x[0-9a-f]+ in \?\? \(\)", bt, re.MULTILINE):
        problems.append(f"repeated rows: the plugin's unwinder did not reach main's frame:\n{bt}")
    else:
        print(f"ok   repeated rows: {why} ...; bt through the plugin's unwinder")


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-gdb-bad-") as work:
        repeated_rows_case(work, problems)
        intact, stripped = build_twins(work)
        address = leaf_breakpoint(intact)
        base = sframe_file_offset(stripped)
        pristine = open(stripped, "rb").read()
        for what, offset, data in DAMAGE:
            image = bytearray(pristine)
            image[base + offset:base + offset + len(data)] = data
            with open(stripped, "wb") as f:
                f.write(image)
            bt, status = bt_and_status(stripped, address, what, problems)
            if bt is None:
                continue
            if not re.search(r"^#0\s+0x0*%x\b" % address, bt, re.MULTILINE):
                problems.append(f"{what}: bt does not print frame #0 at the breakpoint:\n{bt}")
            offsets = [int(o, 16) for o in re.findall(r"\.sframe\+(0x[0-9a-f]+)", status)]
            if not offsets:
                problems.append(f"{what}: status names no .sframe offset:\n{status}")
            elif offset not in offsets:
                problems.append(f"{what}: status does not name offset {offset:#x}:\n{status}")
            else:
                print(f"ok   {what}: {status.strip().splitlines()[3].strip()}")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
