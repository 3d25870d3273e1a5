#!/usr/bin/env python3
"""`.trace` in a relocatable object, read as binutils' readelf relocates it (issue #52: every
section read from an ET_REL file). tests/programs-trace/object_routines.s is notes §3's
199-byte module with each address a symbol reference: gas leaves the fields 0 and writes
R_X86_64_64 relocations (`main + 0`, `.text + 0x30`, `subr2 + 0`). Truth: the bytes
`readelf --relocated-dump=.trace` prints. Checks:
  - `unwindkit trace dump OBJ` prints what `unwindkit trace dump --raw` prints for readelf's
    relocated bytes, and `unwindkit dump OBJ` the same records;
  - `unwindkit trace lookup OBJ` finds the notes' routine and line at .text offsets (subr1
    line 10 at 0x30, subr2 line 5 at 0x7b), where the unrelocated fields put every routine
    at 0."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import tools  # noqa: E402
from truth.tools import need, run  # noqa: E402

UK = os.environ["UNWINDKIT"]
SOURCE = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs-trace",
                      "object_routines.s")
# (.text offset, routine, its start, line): notes §3's rows.
WANT = ((0x0, "main", 0x0, 6), (0xf, "main", 0x0, 7), (0x30, "subr1", 0x30, 10),
        (0x4a, "subr1", 0x30, 12), (0x70, "subr2", 0x70, 4), (0x7b, "subr2", 0x70, 5))
_HEX_ROW = re.compile(r"^\s+0x[0-9a-f]+ ((?:[0-9a-f]{2,8} ?){1,4})")


def relocated_dump(obj):
    """The section's bytes as `readelf --relocated-dump=.trace` prints them."""
    text = run([need("readelf"), "--relocated-dump=.trace", obj]).stdout
    data = b""
    for line in text.splitlines():
        m = _HEX_ROW.match(line)
        if m:
            data += bytes.fromhex(m.group(1).replace(" ", ""))
    if not data:
        raise RuntimeError(f"readelf printed no bytes of .trace:\n{text}")
    return data


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-trace-object-") as work:
        obj = os.path.join(work, "routines.o")
        run([need("as"), SOURCE, "-o", obj])
        relocs = run([need("readelf"), "-r", obj]).stdout
        if "R_X86_64_64" not in relocs.split(".rela.trace", 1)[-1]:
            problems.append(f"gas wrote no R_X86_64_64 for .trace:\n{relocs}")
        raw = os.path.join(work, "relocated.trace")
        with open(raw, "wb") as f:
            f.write(relocated_dump(obj))
        want = run([UK, "trace", "dump", "--raw", raw], check=False)
        got = run([UK, "trace", "dump", obj], check=False)
        if want.returncode or got.returncode or got.stdout != want.stdout:
            problems.append(f"trace dump of the object differs from readelf's relocated bytes:"
                            f"\n{got.stdout}{got.stderr}\n--- relocated:\n{want.stdout}"
                            f"{want.stderr}")
        whole = run([UK, "dump", obj], check=False)
        if want.stdout.strip() not in whole.stdout:
            problems.append(f"unwindkit dump of the object lacks the relocated records:\n"
                            f"{whole.stdout}{whole.stderr}")
        looked = run([UK, "trace", "lookup", obj, *[hex(w[0]) for w in WANT]], check=False)
        lines = looked.stdout.splitlines()
        for pc, routine, start, line in WANT:
            # report.cpp's line: "PC: ROUTINE+OFFSET FILE:LINE [BEGIN, END) in FILE".
            want_text = (f"{pc:#x}: {routine}+{pc - start:#x} ", f":{line} [")
            hit = [l for l in lines if l.startswith(f"{pc:#x}: ")]
            if not hit or not all(t in hit[0] for t in want_text):
                problems.append(f"lookup {pc:#x}: want {routine} line {line}, got {hit}")
        print(f"{len(WANT)} lookups, dump {'equal' if got.stdout == want.stdout else 'differs'}")
        if problems:
            print(looked.stdout, looked.stderr)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    tools.exit_with(main)
