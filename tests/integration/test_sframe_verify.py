#!/usr/bin/env python3
"""`unwindkit sframe verify`: on programs gcc builds with -Wa,--gsframe, every SFrame row must
agree with the DWARF CFI the same assembler wrote (exit 0); after one FRE's CFA offset is
changed in the file, verify must name that row's address (exit 1). The FRE is found by
parsing the section with the layout in shared/notes/formats.md §1, not with our decoder."""
import os
import struct
import subprocess
import sys
import tempfile

UNWINDKIT = os.environ["UNWINDKIT"]

SOURCE = r"""
#include <stdio.h>
#include <string.h>
__attribute__((noinline)) int leaf(int x) { return x * 3; }
__attribute__((noinline)) int mid(int n) { char b[64]; memset(b, n, sizeof b); return leaf(b[3]) + n; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", mid(argc)); return 0; }
"""


def sframe_section(path):
    """(file offset, address) of .sframe, from readelf -S."""
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if " .sframe " in line:
            f = line.split("]", 1)[1].split()
            return int(f[3], 16), int(f[2], 16)
    raise SystemExit(f"{path}: no .sframe")


def corrupt_one_fre(path):
    """Adds 8 to the CFA word of FRE 1 of the first non-PCMASK function with 3+ rows.
    Returns the address that row starts at."""
    data = bytearray(open(path, "rb").read())
    off, addr = sframe_section(path)
    magic, version, flags, abi, _fp, _ra, auxlen, nfde, nfre, frelen, fdeoff, freoff = \
        struct.unpack_from("<HBBBbbBIIIII", data, off)
    assert magic == 0xdee2, hex(magic)
    fde_size = 17 if version == 1 else 20
    hdr = off + 28 + auxlen
    for i in range(nfde):
        start, size, fre_off, num_fres, info = struct.unpack_from("<iIIIB", data, hdr + fdeoff + i * fde_size)
        if info & 0x10 or num_fres < 3:
            continue
        func = addr + start if not flags & 0x4 else addr + 28 + auxlen + fdeoff + i * fde_size + start
        start_size = {0: 1, 1: 2, 2: 4}[info & 0xF]
        p = hdr + freoff + fre_off
        for j in range(2):
            fre_start = int.from_bytes(data[p:p + start_size], "little")
            fre_info = data[p + start_size]
            nwords, wsize = (fre_info >> 1) & 0xF, {0: 1, 1: 2, 2: 4}[(fre_info >> 5) & 3]
            if j == 1:
                w = p + start_size + 1
                cfa = int.from_bytes(data[w:w + wsize], "little", signed=True)
                data[w:w + wsize] = (cfa + 8).to_bytes(wsize, "little", signed=True)
                open(path, "wb").write(data)
                return func + fre_start
            p += start_size + 1 + nwords * wsize
    raise SystemExit("no function with 3 rows")


def verify(path):
    r = subprocess.run([UNWINDKIT, "sframe", "verify", path], capture_output=True, text=True)
    print(f"$ unwindkit sframe verify {os.path.basename(path)} -> {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "t.c"), "w") as f:
            f.write(SOURCE)
        for opt in ("-O0", "-O2", "-O2 -fomit-frame-pointer"):
            exe = os.path.join(d, "t" + opt.replace(" ", ""))
            subprocess.run(["gcc", *opt.split(), "-Wa,--gsframe", "-o", exe, os.path.join(d, "t.c")],
                           check=True)
            r = verify(exe)
            if r.returncode != 0 or " 0 disagreements" not in r.stdout:
                print(f"FAIL: {opt}: expected agreement")
                failures += 1
            row = corrupt_one_fre(exe)
            r = verify(exe)
            if r.returncode != 1 or f"{row:#x}.." not in r.stdout:
                print(f"FAIL: {opt}: expected a disagreement at {row:#x}")
                failures += 1
        r = subprocess.run([UNWINDKIT, "sframe", "verify", "/no/such/file"], capture_output=True)
        if r.returncode != 2:
            print(f"FAIL: missing file should be a usage error, got {r.returncode}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
