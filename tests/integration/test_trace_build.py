#!/usr/bin/env python3
"""`unwindkit trace build|dump|lookup|check` on real -g programs (C and Fortran).

The expected routine/file/line of each address come from the reference tools, not from us:
`addr2line -f -e BINARY ADDR...` (binutils) for file and line, `nm` for the function
symbol containing the address, and `objdump --dwarf=decodedline` for the row boundaries.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

UK = os.environ["UNWINDKIT"]
SRC = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs-trace")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def sh(*args):
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def functions(binary):
    """(start, end, name) of the sized function symbols, from nm."""
    out = []
    for line in sh("nm", "-S", "--defined-only", binary).splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTW":
            start, size = int(f[0], 16), int(f[1], 16)
            if size:
                out.append((start, start + size, f[3]))
    return sorted(out)


def dwarf_rows(binary):
    """Row start addresses of the DWARF line table, from objdump --dwarf=decodedline."""
    addrs = set()
    for line in sh("objdump", "--dwarf=decodedline", binary).splitlines():
        m = re.match(r"^\S+\s+(\d+|-)\s+(0x[0-9a-f]+)", line)
        if m:
            addrs.add(int(m.group(2), 16))
    return sorted(addrs)


def addr2line(binary, addrs):
    out = sh("addr2line", "-f", "-e", binary, *[hex(a) for a in addrs]).splitlines()
    res = []
    for i in range(len(addrs)):
        fn, loc = out[2 * i], out[2 * i + 1]
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        path, _, line = loc.rpartition(":")
        res.append((fn, os.path.basename(path), int(line) if line.isdigit() else 0))
    return res


def probe_addresses(binary):
    """Every DWARF row start, the byte before the next row, and every 3rd byte inside
    functions: many PCs at and between row boundaries."""
    funcs = functions(binary)
    rows = dwarf_rows(binary)
    pcs = set()
    for a in rows:
        pcs.update({a, a - 1, a + 1})
    for start, end, _ in funcs:
        pcs.update(range(start, end, 3))
    inside = lambda a: any(s <= a < e for s, e, _ in funcs)
    return sorted(a for a in pcs if inside(a)), funcs


def verify(binary, label):
    out = os.path.join(os.path.dirname(binary), os.path.basename(binary) + ".trace.elf")
    p = subprocess.run([UK, "trace", "build", binary, "-o", out], capture_output=True, text=True)
    check(p.returncode == 0, f"{label}: build rc {p.returncode}: {p.stderr}")
    if p.returncode:
        return
    # The section is allocated and pointer-aligned (readelf), and the output still runs.
    sec = [l for l in sh("readelf", "-SW", out).splitlines() if " .trace " in l]
    check(len(sec) == 1, f"{label}: one .trace section")
    if sec:
        fields = sec[0].split("]", 1)[1].split()
        check("A" in fields[6], f"{label}: .trace has SHF_ALLOC: {sec[0]}")
        check(fields[-1] == "8", f"{label}: .trace aligned to 8: {sec[0]}")
        check(int(fields[2], 16) % 8 == 0, f"{label}: .trace address aligned")
    check(subprocess.run([out], capture_output=True).returncode == 0, f"{label}: output runs")
    # check: no problems.
    p = subprocess.run([UK, "trace", "check", out], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.startswith("ok:"), f"{label}: check {p.stdout}{p.stderr}")
    # Lookups agree with addr2line (file, line) and nm (routine) for many PCs.
    pcs, funcs = probe_addresses(binary)
    want = addr2line(binary, pcs)
    got = {}
    for i in range(0, len(pcs), 500):
        chunk = pcs[i:i + 500]
        p = subprocess.run([UK, "trace", "lookup", out, *[hex(a) for a in chunk]],
                           capture_output=True, text=True)
        for line in p.stdout.splitlines():
            m = re.match(r"^(0x[0-9a-f]+): (\S+)\+0x[0-9a-f]+ (.*):(-?\d+) \[", line)
            if m:
                got[int(m.group(1), 16)] = (m.group(2), m.group(3), int(m.group(4)))
    compared = mismatches = 0
    for pc, (fn, path, line) in zip(pcs, want):
        if line == 0:
            continue  # no source line for this PC: nothing to compare
        symbol = next(name for s, e, name in funcs if s <= pc < e)
        compared += 1
        if got.get(pc) != (symbol, path, line):
            mismatches += 1
            if mismatches <= 5:
                print(f"  {label} {pc:#x}: ours {got.get(pc)} vs nm/addr2line "
                      f"{(symbol, path, line)} (addr2line -f: {fn})")
    check(compared > 100, f"{label}: compared {compared} PCs")
    check(mismatches == 0, f"{label}: {mismatches} of {compared} PCs disagree")
    print(f"{label}: {compared} PCs agree with addr2line")
    # The record dump and the JSON carry the same rows.
    p = subprocess.run([UK, "trace", "dump", out], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.startswith(".trace contents:\n"), f"{label}: dump")
    check("# TB_TAG_Module" in p.stdout and "# TB_TAG_RTN64" in p.stdout, f"{label}: dump tags")
    records = p.stdout
    # `unwindkit dump` shows every table the file has: .trace record by record (after .sframe
    # when gcc emitted one), the same text as `trace dump`.
    p = subprocess.run([UK, "dump", out], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.endswith(records), f"{label}: dump holds .trace")
    p = subprocess.run([UK, "trace", "dump", out, "--json"], capture_output=True, text=True)
    js = json.loads(p.stdout)
    p = subprocess.run([UK, "trace", "dump", out, "--lines"], capture_output=True, text=True)
    check(len(js["rows"]) == len(p.stdout.splitlines()) - 1, f"{label}: json and --lines rows")
    for row in js["rows"][:50]:
        begin = int(row["begin"], 16)
        fn, path, line = addr2line(binary, [begin])[0]
        check((row["file"], row["line"]) == (path, line),
              f"{label}: json row {row} vs addr2line {path}:{line}")


with tempfile.TemporaryDirectory() as tmp:
    builds = [
        ("c-O0", ["gcc", "-g", "-O0", "-o", "multi",
                  os.path.join(SRC, "multi.c"), os.path.join(SRC, "multi_helper.c")], "multi"),
        ("c-O2-pie", ["gcc", "-g", "-O2", "-fPIE", "-pie", "-o", "multi2",
                      os.path.join(SRC, "multi.c"), os.path.join(SRC, "multi_helper.c")], "multi2"),
        ("fortran", ["gfortran", "-g", "-O0", "-o", "solver",
                     os.path.join(SRC, "solver.f90")], "solver"),
    ]
    for label, cmd, exe in builds:
        subprocess.run(cmd, cwd=tmp, check=True)
        verify(os.path.join(tmp, exe), label)
    # Usage and data errors.
    p = subprocess.run([UK, "trace", "build", os.path.join(tmp, "multi")], capture_output=True)
    check(p.returncode == 2, "build without -o is a usage error")
    subprocess.run(["gcc", "-O0", "-o", "nodebug", os.path.join(SRC, "multi.c"),
                    os.path.join(SRC, "multi_helper.c")], cwd=tmp, check=True)
    p = subprocess.run([UK, "trace", "build", os.path.join(tmp, "nodebug"), "-o",
                        os.path.join(tmp, "x")], capture_output=True, text=True)
    check(p.returncode == 1, f"build of a binary without DWARF fails: {p.returncode}")
    p = subprocess.run([UK, "trace", "dump", os.path.join(tmp, "nodebug")], capture_output=True)
    check(p.returncode == 1, "dump of a file without .trace: exit 1")

print("FAILURES:" if failures else "ok", *failures, sep="\n")
sys.exit(1 if failures else 0)
