#!/usr/bin/env python3
"""SFrame as binutils 2.47 writes it, read as that binutils' readelf reads it.

A corpus made at test time with the release's gcc and the x86_64, AArch64 and s390x cross gcc
(gas and ld 2.47: SFrame v3) from tests/programs/sframe_corpus*.{c,s}: per architecture an
executable, a PIE, a shared library, a static link and objects (`gcc -c`, whose function starts
are `.rela.sframe` relocations), with flexible FDEs (hand-written: a CFA and an RA in other
registers on x86_64, RA and FP in FPRs on s390x; gas 2.47 writes none for AArch64), the signal
and outermost bits, AArch64 PAC B-key rows and ld's PLT functions (x86_64, s390x). Checks, against readelf
--sframe (the architecture's own readelf), text for text:
  - `unwindkit sframe dump FILE` prints exactly what readelf prints;
  - GDB's (gdb-multiarch with the plugin) and LLDB's `unwindkit sframe dump` print it too;
  - `unwindkit sframe lookup` at every row of every s390x flexible FDE of a linked file gives
    the CFA readelf shows for that row.
Prints the count of files per architecture and kind and of matches per reader. Skipped (exit
77) where the readelf is older than 2.47 or a cross compiler is missing."""
import collections
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import tools  # noqa: E402
from truth.tools import Skip, need, run  # noqa: E402

UK = os.environ["UNWINDKIT"]
BUILD = os.environ.get("UNWINDKIT_BUILD_DIR", "")
GDB_PLUGIN = os.path.join(BUILD, "gdb-plugin", "unwindkit-gdb.py")
LLDB_PLUGIN = os.path.join(BUILD, "lldb-plugin", "libunwindkit-lldb.so")
PROGRAMS = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")

# Per architecture: its gcc, its readelf, extra code-generation flags, and the DWARF numbers
# of its SP and FP (readelf's "sp" / "fp").
ARCHES = {
    "x86_64": ("gcc", "readelf", [], 7, 6),
    "aarch64": ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-readelf",
                ["-mbranch-protection=pac-ret+b-key"], 31, 29),
    "s390x": ("s390x-linux-gnu-gcc", "s390x-linux-gnu-readelf", [], 15, 11),
}
GSFRAME = ["-O2", "-Wa,--gsframe"]


def binutils_version(readelf):
    first = run([readelf, "--version"]).stdout.splitlines()[0]
    m = re.search(r"(\d+)\.(\d+)", first.split(")")[-1])
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def tools_here():
    """The tools of every architecture, or Skip naming what is missing."""
    for cc, readelf, _, _, _ in ARCHES.values():
        need(cc)
        need(readelf)
        if binutils_version(readelf) < (2, 47):
            raise Skip(f"{readelf} is older than binutils 2.47")
    if os.path.exists(GDB_PLUGIN):
        need("gdb-multiarch")


def build_corpus(work):
    """[(arch, kind, path)] of the corpus, built in `work`."""
    files = []
    src = lambda name: os.path.join(PROGRAMS, name)  # noqa: E731
    for arch, (cc, _, flags, _, _) in ARCHES.items():
        base = [cc, *GSFRAME, *flags]
        code = [src("sframe_corpus.c"), src(f"sframe_corpus_{arch}.s")]
        program = [src("sframe_corpus_main.c"), *code]
        out = lambda name: os.path.join(work, f"{arch}-{name}")  # noqa: E731
        for kind, cmd, path in (
                ("object", base + ["-c", code[0]], out("corpus.o")),
                ("object", base + ["-c", code[1]], out("asm.o")),
                ("executable", base + ["-no-pie", *program], out("exe")),
                ("pie", base + ["-fPIE", "-pie", *program], out("pie")),
                ("shared library", base + ["-fPIC", "-shared", *code], out("lib.so")),
                ("static link", base + ["-static", *program], out("static"))):
            run(cmd + ["-o", path])
            files.append((arch, kind, path))
    return files


def readelf_text(arch, path):
    text = run([ARCHES[arch][1], "--sframe", path]).stdout
    if not text.startswith("Contents of the SFrame section .sframe:"):
        raise RuntimeError(f"readelf shows no .sframe in {path}:\n{text}")
    return text


def gdb_dumps(files):
    """{path: the text GDB's `unwindkit sframe dump` prints}, one GDB per file."""
    from test_gdb_cores import run_gdb
    dumps = {}
    for _, _, path in files:
        out = run_gdb("gdb-multiarch", path,
                      commands=["echo @@DUMP\\n", "unwindkit sframe dump", "echo @@END\\n"])
        dumps[path] = out.split("@@DUMP\n", 1)[-1].split("@@END", 1)[0]
    return dumps


def lldb_dumps(files):
    """{path: the text LLDB's `unwindkit sframe dump -m NAME` prints}, one LLDB per file."""
    from lldb_plugin import Lldb
    lldb = Lldb(plugin=True)
    dumps = {}
    for _, _, path in files:
        out = lldb.run(["script print('@@DUMP')",
                        f"unwindkit sframe dump -m {os.path.basename(path)}",
                        "script print('@@END')"], path, check=False)
        text = out.split("@@DUMP\n", 1)[-1].split("@@END", 1)[0]
        dumps[path] = "".join(l for l in text.splitlines(keepends=True)
                              if not l.startswith("(lldb) "))
    return dumps


_FUNC = re.compile(r"^    func idx \[\d+\]: pc = (0x[0-9a-f]+), size = \d+ bytes(.*)$")
_ROW = re.compile(r"^    ([0-9a-f]{16})  (\S+)")
_CELL = re.compile(r"^(\()?(sp|fp|r\d+)([+-]\d+)\)?$")


def flexible_rows(text):
    """(pc, CFA cell) of every row of every flexible FDE readelf shows."""
    rows, flexible = [], False
    for line in text.splitlines():
        f = _FUNC.match(line)
        if f:
            flexible = 'attr = "' in f.group(2) and "F" in f.group(2).split('attr = "')[1]
            continue
        r = _ROW.match(line)
        if flexible and r and r.group(2) != "RA":  # "RA undefined" has no CFA
            rows.append((int(r.group(1), 16), r.group(2)))
    return rows


def check_lookups(arch, path, text):
    """Problems of `sframe lookup` at each flexible row against readelf's CFA cell."""
    _, _, _, sp, fp = ARCHES[arch]
    problems, rows = [], flexible_rows(text)
    for pc, cell in rows:
        m = _CELL.match(cell)
        if not m:
            problems.append(f"{path} {pc:#x}: readelf's CFA cell {cell!r} not understood")
            continue
        reg = {"sp": sp, "fp": fp}.get(m.group(2)) or int(m.group(2)[1:])
        want = {"kind": "deref_reg_offset" if m.group(1) else "reg_offset", "reg": reg,
                "offset": int(m.group(3))}
        p = run([UK, "sframe", "lookup", "--json", path, hex(pc)], check=False)
        try:
            got = json.loads(p.stdout)["rule"]["cfa"]
        except (ValueError, KeyError):
            problems.append(f"{path} {pc:#x}: lookup gives no rule:\n{p.stdout}{p.stderr}")
            continue
        if got != want:
            problems.append(f"{path} {pc:#x}: lookup's CFA {got} is not readelf's {cell}")
    return problems, len(rows)


def main():
    tools_here()
    problems = []
    counts = collections.Counter()
    matches = collections.Counter()
    looked_up = 0
    with tempfile.TemporaryDirectory(prefix="uk-sframe-corpus-") as work:
        files = build_corpus(work)
        expected = {path: readelf_text(arch, path) for arch, _, path in files}
        readers = {"unwindkit sframe dump": lambda: {
            path: run([UK, "sframe", "dump", path], check=False).stdout for _, _, path in files}}
        # A build without the plugins (the sanitizer build) compares the CLI alone.
        for reader, plugin, dumps in (
                ("GDB unwindkit sframe dump", GDB_PLUGIN, gdb_dumps),
                ("LLDB unwindkit sframe dump", LLDB_PLUGIN, lldb_dumps)):
            if os.path.exists(plugin):
                readers[reader] = lambda dumps=dumps: dumps(files)
            else:
                print(f"NOTE: {plugin} is not built here: {reader} not compared")
        for reader, dumps in readers.items():
            try:
                got = dumps()
            except (RuntimeError, AssertionError, Skip) as e:
                problems.append(f"{reader} could not be run: {e}")
                continue
            for arch, kind, path in files:
                # The CLI's text must be byte for byte; a debugger's framing (its prompt and
                # line ends) is left out: the text between its markers, stripped.
                same = (got[path] == expected[path] if reader == "unwindkit sframe dump"
                        else got[path].strip() == expected[path].strip())
                if same:
                    matches[(reader, arch, kind)] += 1
                else:
                    problems.append(f"{reader} differs from readelf for {path}:\n{got[path]}"
                                    f"\n--- readelf:\n{expected[path]}")
        for arch, kind, path in files:
            counts[(arch, kind)] += 1
            if arch == "s390x" and kind != "object":
                found, n = check_lookups(arch, path, expected[path])
                problems += found
                looked_up += n
        flex = {a: sum(len(flexible_rows(expected[p])) for b, _, p in files if b == a)
                for a in ARCHES}
        plt = {a: sum(expected[p].count("STARTPC[m]") for b, _, p in files if b == a)
               for a in ARCHES}
        bits = {bit: sum(expected[p].count(text) for _, _, p in files)
                for bit, text in (("signal", 'attr = "S'), ("outermost", "RA undefined"),
                                  ("pauth B key", "pauth = B key"), ("mangled RA", "[s]"))}

    for (arch, kind), n in sorted(counts.items()):
        line = ", ".join(f"{reader}: {matches[(reader, arch, kind)]}/{n}" for reader in readers)
        print(f"{arch:8} {kind:15} {n} files; {line}")
    print(f"flexible rows per architecture: {flex}; PLT (PCMASK) functions: {plt}; {bits}")
    print(f"s390x flexible rows looked up: {looked_up}")
    if looked_up == 0:
        problems.append("no s390x flexible row was looked up: the check proves nothing")
    if flex["x86_64"] == 0 or flex["s390x"] == 0 or plt["x86_64"] == 0:
        problems.append(f"the corpus lacks what it is for: flexible rows {flex}, PLT {plt}")
    if min(bits.values()) == 0:
        problems.append(f"the corpus lacks a bit it is for: {bits}")
    for p in problems:
        print("FAIL:", p)
    print(f"{len(problems)} problems" if problems else "the whole corpus reads as readelf reads it")
    return 1 if problems else 0


if __name__ == "__main__":
    tools.exit_with(main)
