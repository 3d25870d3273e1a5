#!/usr/bin/env python3
"""Analyzer oracle (issue H1): the prologue analyzer's claims against the compiler's CFI.

The project's own core library sources and the test programs (tests/programs/) are built
with `-Wa,--gsframe` at -O0 and -O2, for x86_64 (gcc) and AArch64 (aarch64-linux-gnu-gcc),
into shared objects, so every function has both `.eh_frame` and `.sframe`.
`prologue_claims` (tests/tools/) prints what the analyzer, given only the code and the
SFrame rows, claims; readelf --debug-dump=frames-interp prints the CFI. At every row of every
function (each CFI row's start and each SFrame row's start):
- every register claimed saved must be at that CFA offset in the CFI (cell "c<offset>");
- every callee-saved register claimed unchanged must be one the CFI leaves unmentioned
  there ("u", "s" or no column).
Cold fragments (FUNC.cold) are analyzed from the jumps into them, as the walker does
(issue H3), so those claims are held too. And `unwindkit sframe check --registers --json`
(the registers report) at each call site it lists: the same two rules.
0 violations. Prints rows, claims and violations, the share of functions fully explained,
per architecture and -O level, and per architecture the report's share of register claims
at call sites proven.

To keep CI time to a few minutes, -O0 (whose frames are all alike) builds the core's
top-level, sframe/ and prologue/ sources only; UNWINDKIT_PROLOGUE_ORACLE_FULL=1 builds every
core source at both levels. ccache is used when installed.
"""
import concurrent.futures
import glob
import shutil
import json
import os
import re
import subprocess
import sys
import tempfile

from truth.cfi import parse_cfi

SRC = os.environ["UNWINDKIT_SOURCE_DIR"]
TOOL = os.path.join(os.environ["UNWINDKIT_BUILD_DIR"], "tests", "prologue_claims")
CLI = os.path.join(os.environ["UNWINDKIT_BUILD_DIR"], "cli", "unwindkit")
JOBS = 2

# Callee-saved registers by the ABIs (DWARF numbers): System V x86_64 psABI; AAPCS64 with
# "DWARF for the Arm 64-bit Architecture" (d8-d15 = 72-79).
X86_64_SAVED = [3, 6, 12, 13, 14, 15]
AARCH64_SAVED = list(range(19, 30)) + list(range(72, 80))

# readelf's column names → DWARF numbers.
X86_64_NAMES = {n: i for i, n in enumerate(
    "rax rdx rcx rbx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15".split())}
AARCH64_NAMES = {**{f"x{i}": i for i in range(31)}, "sp": 31,
                 **{f"v{i}": 64 + i for i in range(32)}}

ARCHS = {
    "x86_64": dict(cc="gcc", cxx="g++", readelf="readelf", saved=X86_64_SAVED,
                   names=X86_64_NAMES, cross_includes=False),
    "aarch64": dict(cc="aarch64-linux-gnu-gcc", cxx="aarch64-linux-gnu-g++",
                    readelf="aarch64-linux-gnu-readelf", saved=AARCH64_SAVED,
                    names=AARCH64_NAMES, cross_includes=True),
}
OPTS = ["-O0", "-O2"]
FULL = os.environ.get("UNWINDKIT_PROLOGUE_ORACLE_FULL") == "1"
O0_CORE = ("", "sframe", "prologue")  # core/src/ folders built at -O0 unless FULL
CCACHE = ["ccache"] if shutil.which("ccache") else []

# The headers the core includes from outside the C library; the cross compiler gets only
# these (symlinked into a folder of their own), never the host's /usr/include.
HOST_HEADERS = ["fmt", "tl", "nlohmann", "capstone", "elfutils", "libelf.h", "gelf.h", "dwarf.h"]

def run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=900)
    if check and p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p


def cross_include_dir():
    """The folder of HOST_HEADERS links, at one path for every run: it is in the compile
    commands, and ccache finds a command it ran before only if it reads the same (the plain
    and the ASan runs compile the same objects)."""
    inc = os.path.join(tempfile.gettempdir(), f"unwindkit-prologue-include-{os.getuid()}")
    os.makedirs(inc, exist_ok=True)
    for h in HOST_HEADERS:
        try:
            os.symlink(os.path.join("/usr/include", h), os.path.join(inc, h))
        except FileExistsError:  # made by an earlier run
            pass
    return inc


def compile_jobs(arch, opt, work, inc):
    """(command, object, required) for every source of one configuration."""
    a = ARCHS[arch]
    out = os.path.join(work, arch, opt.lstrip("-"))
    jobs = []
    common = [opt, "-fPIC", "-g0", "-Wa,--gsframe", "-c"]
    core = sorted(glob.glob(os.path.join(SRC, "core", "src", "**", "*.cpp"), recursive=True))
    if opt == "-O0" and not FULL:
        core = [c for c in core if os.path.dirname(os.path.relpath(c, os.path.join(SRC, "core", "src")))
                in O0_CORE]
    for i, src in enumerate(core):
        obj = os.path.join(out, "core", f"{i}.o")
        cmd = [*CCACHE, a["cxx"], "-std=c++20", *common, "-I", os.path.join(SRC, "core", "include"),
               "-I", os.path.join(SRC, "core", "src")]
        if inc:
            cmd += ["-I", inc]
        jobs.append((cmd + [src, "-o", obj], obj, True))
    for src in sorted(glob.glob(os.path.join(SRC, "tests", "programs", "*.c*"))):
        obj = os.path.join(out, "programs", os.path.basename(src) + ".o")
        compiler = a["cxx"] if src.endswith(".cpp") else a["cc"]
        jobs.append(([*CCACHE, compiler, *common, "-pthread", src, "-o", obj], obj, False))
    return out, jobs


def link(arch, out):
    """One shared object per part (undefined symbols allowed; the test programs' duplicate
    globals such as main: the first kept, every function's code still in .text)."""
    cxx = ARCHS[arch]["cxx"]
    libs = []
    for part in ("core", "programs"):
        objs = sorted(glob.glob(os.path.join(out, part, "*.o")))
        lib = os.path.join(out, f"lib{part}.so")
        run([cxx, "-shared", "-Wl,--allow-multiple-definition", *objs, "-o", lib])
        libs.append((part, lib))
    return libs


class Tally:
    def __init__(self):
        self.functions = self.explained = self.no_cfi = 0
        self.rows = self.saved_claims = self.unchanged_claims = 0
        self.unclaimed = 0  # callee-saved registers neither claimed saved nor unchanged
        self.fragments = 0  # functions analyzed from the jumps into them (cold fragments)
        # `sframe check --registers`: register claims at call sites asked and proven.
        self.report_asked = self.report_proven = 0
        self.violations = []
        self.stopped = {}
        self.seconds = 0.0

    def add(self, other):
        for k in ("functions", "explained", "no_cfi", "rows", "saved_claims",
                  "unchanged_claims", "unclaimed", "fragments", "report_asked",
                  "report_proven", "seconds"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.violations += other.violations
        for k, v in other.stopped.items():
            self.stopped[k] = self.stopped.get(k, 0) + v


def region_at(regions, pc):
    for r in regions:
        if r["start"] <= pc < r["end"]:
            return r
    return None


def check(arch, lib, label):
    a = ARCHS[arch]
    names = {v: k for k, v in a["names"].items()}
    cfi = parse_cfi(run([a["readelf"], "--debug-dump=frames-interp", lib]).stdout)
    t = Tally()
    for line in run([TOOL, lib]).stdout.splitlines():
        f = json.loads(line)
        if "functions" in f:
            t.seconds += f["seconds"]
            continue
        t.functions += 1
        t.explained += f["explained"]
        t.fragments += f["fragment"]
        if f["stopped"]:
            # The reason without its address, to count kinds.
            kind = re.sub(r"0x[0-9a-f]+", "X", f["stopped"].split(": ", 2)[-1])
            t.stopped[kind] = t.stopped.get(kind, 0) + 1
        table = cfi.get(f["start"])
        if not table:
            t.no_cfi += 1
            continue
        pcs = sorted({loc for loc, _ in table if f["start"] <= loc < f["end"]} | set(f["rows"]))
        for pc in pcs:
            region = region_at(f["regions"], pc)
            cells = None
            for loc, c in table:
                if loc <= pc:
                    cells = c
            if region is None or cells is None:
                continue
            t.rows += 1
            saved = {reg: off for reg, off in region["saved"]}
            for reg, off in saved.items():
                t.saved_claims += 1
                cell = cells.get(names.get(reg, f"r{reg}"), "u")
                if cell != f"c{off:+d}":
                    t.violations.append(f"{label} {arch}: {pc:#x} (function {f['start']:#x}): "
                                        f"claims {names.get(reg, reg)} at cfa{off:+d}, CFI says {cell}")
            for reg in a["saved"]:
                if reg in saved:
                    continue
                if not region["unchanged"]:
                    t.unclaimed += 1
                    continue
                t.unchanged_claims += 1
                cell = cells.get(names.get(reg, f"r{reg}"), "u")
                if cell not in ("u", "s"):
                    t.violations.append(f"{label} {arch}: {pc:#x} (function {f['start']:#x}): "
                                        f"claims {names.get(reg, reg)} unchanged, CFI says {cell}")
    check_report(arch, lib, label, cfi, names, t)
    return t


def cells_at(table, pc):
    cells = None
    for loc, c in table:
        if loc <= pc:
            cells = c
    return cells


def check_report(arch, lib, label, cfi, names, t):
    """`unwindkit sframe check --registers --json`: at every call site it lists, each register
    it claims saved must be at that CFA offset in the CFI, each it claims unchanged one the CFI
    leaves unmentioned (what CFI states is a superset of what the report claims proven)."""
    doc = json.loads(run([CLI, "sframe", "check", "--registers", "--json", lib]).stdout)
    t.report_asked += doc["asked"]
    t.report_proven += doc["proven"]
    for f in doc["functions"]:
        table = cfi.get(f["start"])
        if not table:
            continue
        for call in f["calls"]:
            cells = cells_at(table, call["at"])
            if cells is None:
                continue
            where = f"{label} {arch} report: {call['at']:#x} (function {f['start']:#x})"
            for reg, off in call["saved"]:
                cell = cells.get(names.get(reg, f"r{reg}"), "u")
                if cell != f"c{off:+d}":
                    t.violations.append(f"{where}: claims {names.get(reg, reg)} at cfa{off:+d}, "
                                        f"CFI says {cell}")
            for reg in call["unchanged"]:
                cell = cells.get(names.get(reg, f"r{reg}"), "u")
                if cell not in ("u", "s"):
                    t.violations.append(f"{where}: claims {names.get(reg, reg)} unchanged, "
                                        f"CFI says {cell}")


def main():
    for tool in (TOOL, CLI):
        if not os.access(tool, os.X_OK):
            print(f"{tool} is not built")
            return 1
    with tempfile.TemporaryDirectory(prefix="uk-prologue-") as work:
        inc = cross_include_dir()
        configs = []
        jobs = []
        for arch in ARCHS:
            for opt in OPTS:
                out, js = compile_jobs(arch, opt, work, inc if ARCHS[arch]["cross_includes"] else None)
                for sub in ("core", "programs"):
                    os.makedirs(os.path.join(out, sub), exist_ok=True)
                configs.append((arch, opt, out))
                jobs += js
        skipped = []
        with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
            results = pool.map(lambda j: (j, run(j[0], check=False)), jobs)
            for (cmd, obj, required), p in results:
                if p.returncode == 0:
                    continue
                if required:
                    print(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr}")
                    return 1
                skipped.append(f"{cmd[len(CCACHE)]} {os.path.basename(cmd[-3])} (does not build)")
        for s in skipped:
            print(f"skipped: {s}")

        total = Tally()
        print(f"{'arch':8} {'opt':4} {'part':9} {'functions':>9} {'explained':>10} {'rows':>7} "
              f"{'saved':>7} {'unchanged':>9} {'unclaimed':>9} {'fragments':>9} "
              f"{'calls proven':>16} {'violations':>10}")
        by_arch = {}
        for arch, opt, out in configs:
            for part, lib in link(arch, out):
                t = check(arch, lib, f"{opt} {part}")
                share = 100.0 * t.explained / t.functions if t.functions else 0.0
                proven = f"{t.report_proven}/{t.report_asked}"
                print(f"{arch:8} {opt:4} {part:9} {t.functions:9} {share:9.1f}% {t.rows:7} "
                      f"{t.saved_claims:7} {t.unchanged_claims:9} {t.unclaimed:9} "
                      f"{t.fragments:9} {proven:>16} {len(t.violations):10}")
                total.add(t)
                by_arch.setdefault(arch, Tally()).add(t)
        share = 100.0 * total.explained / total.functions if total.functions else 0.0
        print(f"total: {total.functions} functions ({total.no_cfi} without CFI), {share:.1f}% "
              f"fully explained; {total.rows} rows checked; claims: {total.saved_claims} saved, "
              f"{total.unchanged_claims} unchanged; {total.unclaimed} unclaimed; "
              f"{len(total.violations)} violations; analyses took {total.seconds:.3f} s")
        for arch, t in by_arch.items():
            share = 100.0 * t.report_proven / t.report_asked if t.report_asked else 0.0
            print(f"{arch}: {t.report_proven} of {t.report_asked} register claims at call sites "
                  f"proven ({share:.1f}%), {t.fragments} fragments analyzed from their jumps")
        for kind, n in sorted(total.stopped.items(), key=lambda kv: -kv[1])[:10]:
            print(f"  stopped {n:5}: {kind}")
        for v in total.violations[:40]:
            print(f"VIOLATION {v}")
        if total.functions == 0 or total.rows == 0:
            print("nothing was checked")
            return 1
        return 1 if total.violations else 0


if __name__ == "__main__":
    sys.exit(main())
