#!/usr/bin/env python3
"""`unwindkit trace dump|lookup|check --raw` on the 199-byte module of notes §3 (assembled
here from the record listing of LLVM's llvm-objdump --traceback test, subr2's first line
record -9 as the notes say) and on malformed sections: errors name ".trace", offset, field."""
import json
import os
import struct
import subprocess
import sys
import tempfile

UK = os.environ["UNWINDKIT"]
BEGIN = 0x401000
FILES = [b"traceback-complete_a.c", b"traceback-complete_b.c"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def header(size, files, code_size=0x8E):
    b = struct.pack("<BHBIQII", 0x0A, 2, 0, size, BEGIN, len(files), code_size) + b"\0\0"
    for f in files:
        b += struct.pack("<H", len(f)) + f
    return b


def rtn64(b, name, pc):
    b += b"\0" * (-len(b) % 8)
    return b + struct.pack("<BBHQ", 0x0C, 0, len(name), pc) + name


def module199():
    b = header(199, FILES)
    b = rtn64(b, b"main", BEGIN) + bytes.fromhex("0406 090e000000 0401 0911000000")
    b = rtn64(b, b"subr1", BEGIN + 0x30) + bytes.fromhex(
        "0403 090a000000 0401 090e000000 0401 090d000000 0401 0908000000 0301000000")
    b = rtn64(b, b"subr2", BEGIN + 0x70) + bytes.fromhex("04f7 090a000000 0401 0912000000")
    assert len(b) == 199
    return b


def uk(*args):
    p = subprocess.run([UK, "trace", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as tmp:
    good = os.path.join(tmp, "m199.trace")
    with open(good, "wb") as f:
        f.write(module199())
    # Lookups: the lines and ranges the notes state.
    want = {0x0: ("main", 6), 0xE: ("main", 6), 0xF: ("main", 7), 0x20: ("main", 7),
            0x30: ("subr1", 10), 0x3B: ("subr1", 11), 0x4A: ("subr1", 12), 0x60: ("subr1", 13),
            0x70: ("subr2", 4), 0x7B: ("subr2", 5), 0x8D: ("subr2", 5)}
    rc, out, _ = uk("lookup", good, "--raw", *[hex(BEGIN + k) for k in want])
    check(rc == 0, f"lookup rc {rc}")
    for line, (off, (fn, ln)) in zip(out.splitlines(), want.items()):
        f = "traceback-complete_b.c" if fn == "subr2" else "traceback-complete_a.c"
        check(f" {fn}+" in line and f" {f}:{ln} " in line, f"lookup {off:#x}: {line}")
    rc, out, _ = uk("lookup", good, "--raw", hex(BEGIN + 0x21))
    check(rc == 1 and "??" in out, "an address in a gap has no line")
    rc, out, _ = uk("lookup", good, "--raw", "nonsense")
    check(rc == 2, "a bad address is a usage error")
    # Dump views.
    rc, out, _ = uk("dump", good, "--raw")
    check(rc == 0 and out.startswith(".trace contents:\n"), "record dump")
    for s in ("(line: 4, delta line: -9)", "(PC: subr1+0x28, delta PC: 0x9)", "# TB_TAG_File"):
        check(s in out, f"record dump has {s}")
    rc, out, _ = uk("dump", good, "--raw", "--json")
    js = json.loads(out)
    check([r["line"] for r in js["rows"]] == [6, 7, 10, 11, 12, 13, 4, 5], "json lines")
    check(js["modules"][0]["size"] == 199 and js["modules"][0]["files"] ==
          [f.decode() for f in FILES], "json module")
    rc, out, _ = uk("check", good, "--raw")
    check(rc == 0 and out.startswith("ok: 1 modules, 3 routines, 8 ranges"), f"check: {out}")

    # Malformed: an unknown tag byte in place of subr1's first LN1 (offset 0x81) and an
    # out-of-range file index (FIL at 0x9d, index field at 0x9e): both reported by check.
    bad = bytearray(module199())
    bad[0x81] = 0x0B
    bad[0x9E] = 7
    badf = os.path.join(tmp, "bad.trace")
    with open(badf, "wb") as f:
        f.write(bad)
    rc, _, err = uk("check", badf, "--raw")
    check(rc == 1, "check of a bad section exits 1")
    check(".trace+0x81: tag:" in err, f"unknown tag reported at its offset: {err}")
    check(".trace+0x9e: FIL.file_index:" in err, f"file index reported at its offset: {err}")
    rc, _, err = uk("dump", badf, "--raw")
    check(rc == 1 and ".trace+0x81: tag:" in err, "dump stops at the first problem")
    cut = os.path.join(tmp, "cut.trace")
    with open(cut, "wb") as f:
        f.write(module199()[:150])
    rc, _, err = uk("check", cut, "--raw")
    check(rc == 1 and ".trace+0x4: HDR.size:" in err, f"cut section: {err}")

print("FAILURES:" if failures else "ok", *failures, sep="\n")
sys.exit(1 if failures else 0)
