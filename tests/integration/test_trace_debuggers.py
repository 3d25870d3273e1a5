#!/usr/bin/env python3
"""`.trace` in the debuggers: routine names, files and lines of frames without debug info.

For a C program and a gfortran program (tests/integration/programs/trace_*), each built with
`-g -O0` from two source files and crashing a few routines deep:
- intact: `unwindkit trace build` of the -g program (DWARF and .trace);
- stripped: `strip --strip-all` of the intact copy (no DWARF, no .symtab; .trace, an
  allocated section, is kept; .eh_frame too, so both debuggers unwind it on their own).
Both crash to a core (same addresses: ASLR off, same-length folders). The truth is `bt` of
GDB alone (and of LLDB alone) on the intact core: per frame of the program's own sources,
its function name, file basename and line. With the plugin, `bt` on the stripped core must
give the same; without it, `bt` on the stripped core must not (which shows the plugin made
the difference). The LLDB side file's DWARF, made from .trace, must pass
`llvm-dwarfdump --verify` and hold the program's own line table as binutils reads it. `unwindkit trace lookup` in each debugger must give the truth's
file:line for the innermost frame of the program's own.

One known difference is expected, not hidden: GDB names a Fortran main program by its
PROGRAM statement (DWARF DW_AT_name, here `trace_driver`); .trace is made from the symbol
table, which has only its linkage name `MAIN__`.
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from truth.tools import Skip, llvm, need, run  # noqa: E402
from lldb_plugin import Lldb  # noqa: E402
from test_gdb_cores import run_gdb  # noqa: E402

PROGRAMS = {
    "c": ("gcc", ["trace_main.c", "trace_visit.c"], {}),
    "fortran": ("gfortran", ["trace_solver.f90", "trace_driver.f90"], {"trace_driver": "MAIN__"}),
}
FLAGS = ["-g", "-O0", "-fno-omit-frame-pointer"]

_GDB_FRAME = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S*) \(")
_LLDB_FRAME = re.compile(r"^\s*\*?\s*frame #(\d+): 0x[0-9a-f]+ [^`\s]+`([^\s(]+)")
_AT = re.compile(r" at (\S+?):(\d+)(?::\d+)?$")


def gdb_frames(text):
    """{level: (name, file basename or None, line or None)} from GDB's `bt`."""
    out = {}
    for line in text.splitlines():
        m = _GDB_FRAME.match(line)
        if m:
            at = _AT.search(line)
            out[int(m.group(1))] = (m.group(2), os.path.basename(at.group(1)) if at else None,
                                    int(at.group(2)) if at else None)
    return out


def lldb_frames(text):
    out = {}
    for line in text.splitlines():
        m = _LLDB_FRAME.match(line)
        if m:
            at = _AT.search(line)
            out[int(m.group(1))] = (m.group(2), os.path.basename(at.group(1)) if at else None,
                                    int(at.group(2)) if at else None)
    return out


def build(name, work, src_dir):
    compiler, sources, _ = PROGRAMS[name]
    need(compiler)
    root = os.path.join(work, name)
    intact, stripped = os.path.join(root, "intact"), os.path.join(root, "stripd")
    os.makedirs(intact)
    os.makedirs(stripped)
    g = os.path.join(root, "prog.g")
    # Modules first: the Fortran main program uses the module the first file defines.
    run([compiler, *FLAGS, "-o", g, *[os.path.join(src_dir, s) for s in sources]], cwd=root)
    run([os.environ["UNWINDKIT"], "trace", "build", g, "-o", os.path.join(intact, "prog")])
    run(["strip", "--strip-all", "-o", os.path.join(stripped, "prog"), os.path.join(intact, "prog")])
    return (truth.Build(intact, os.path.join(intact, "prog"), []),
            truth.Build(stripped, os.path.join(stripped, "prog"), []))


def decoded_lines(path):
    """{address: (file basename, line)} from `objdump --dwarf=decodedline` (binutils)."""
    rows = {}
    for line in run(["objdump", "--dwarf=decodedline", path]).stdout.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+(0x[0-9a-f]+)", line)
        if m and int(m.group(2)) > 0:
            rows.setdefault(int(m.group(3), 16), (os.path.basename(m.group(1)), int(m.group(2))))
    return rows


def sections(path):
    return set(re.findall(r"\]\s+(\.\S+)", run(["readelf", "-SW", path]).stdout))


def compare(label, truth_frames, with_plugin, without_plugin, own_files, renames, failures):
    own = {lvl: f for lvl, f in truth_frames.items() if f[1] in own_files}
    if len(own) < 3:
        failures.append(f"{label}: intact bt shows {len(own)} frames of the program's sources "
                        f"(want >= 3): {truth_frames}")
        return own
    for lvl, (name, file, line) in sorted(own.items()):
        want = (renames.get(name, name), file, line)
        got = with_plugin.get(lvl)
        ok = got == want
        print(f"{'ok  ' if ok else 'FAIL'} {label} #{lvl}: intact {(name, file, line)}; "
              f"stripped+plugin {got}; stripped alone {without_plugin.get(lvl)}")
        if not ok:
            failures.append(f"{label} #{lvl}: want {want}, got {got}")
        alone = without_plugin.get(lvl)
        if alone is None or alone[1:] == (file, line) or alone[0] == want[0]:
            failures.append(f"{label} #{lvl}: without the plugin the stripped bt already "
                            f"shows {alone}: the test could not fail")
    # Frames outside the program's sources (libc, libgfortran) keep the names the debugger
    # alone gives them on the stripped core.
    for lvl, alone in sorted(without_plugin.items()):
        if lvl not in own and (with_plugin.get(lvl) or (None,))[0] != alone[0]:
            failures.append(f"{label} #{lvl}: alone {alone}, with the plugin {with_plugin.get(lvl)}")
    return own


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "integration", "programs")
    failures, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="unwindkit-trace-dbg-") as work:
        for name, (_, sources, renames) in PROGRAMS.items():
            try:
                intact, stripped = build(name, work, src)
                have = sections(stripped.exe)
                if ".trace" not in have or ".debug_info" in have or ".symtab" in have:
                    failures.append(f"{name}: stripped copy has sections {sorted(have)}")
                    continue
                intact_core = truth.make_core(intact, truth.X86_64)
                stripped_core = truth.make_core(stripped, truth.X86_64)
            except Skip as e:
                print(f"SKIP {name}: {e}")
                continue
            own_files = set(sources)
            gdb = need("gdb")
            alone = run_gdb(gdb, stripped.exe, stripped_core, ["bt"], plugin=False)
            intact_frames = gdb_frames(run_gdb(gdb, intact.exe, intact_core, ["bt"], plugin=False))
            # Twice: the second session learns which files have .trace from the side-file
            # cache the first one filled (gdb-plugin/README.md), not from the files.
            for session in ("", ", cache kept"):
                own = compare(f"gdb {name}{session}", intact_frames,
                              gdb_frames(run_gdb(gdb, stripped.exe, stripped_core, ["bt"],
                                                 plugin=True)),
                              gdb_frames(alone), own_files, renames, failures)
            # The filter switched off gives back GDB's own bt, line for line.
            off = run_gdb(gdb, stripped.exe, stripped_core,
                          ["disable frame-filter global unwindkit-trace", "bt"], plugin=True)
            if [l for l in off.splitlines() if l.startswith("#")] != \
                    [l for l in alone.splitlines() if l.startswith("#")]:
                failures.append(f"gdb {name}: bt with the filter disabled differs from GDB alone")
            # The commands on the innermost frame of the program's own: what .trace gives its
            # pc (a caller's pc - 1: the call, not the return address) must be the truth's
            # file:line.
            level = min(own)
            _, file, line = own[level]
            pc = "$pc" if level == 0 else "$pc - 1"
            out = run_gdb(gdb, stripped.exe, stripped_core,
                          [f"frame {level}", f"unwindkit trace lookup {pc}",
                           "unwindkit trace dump"], plugin=True)
            found = re.search(r"^0x[0-9a-f]+: \S+\+0x[0-9a-f]+ (\S+):(\d+) ", out, re.M)
            if ".trace contents:" not in out or not found or found.groups() != (file, str(line)):
                failures.append(f"gdb {name}: trace lookup/dump of frame #{level} "
                                f"(want {file}:{line}): {out[-800:]}")
            try:
                native, ours = Lldb(plugin=False), Lldb(plugin=True)
                own = compare(f"lldb {name}",
                        lldb_frames(native.run(["bt"], intact.exe, intact_core)),
                        lldb_frames(ours.run(["bt"], stripped.exe, stripped_core)),
                        lldb_frames(native.run(["bt"], stripped.exe, stripped_core)),
                        own_files, {}, failures)
                # The innermost frame of the program's own: its routine and line, per .trace.
                level = min(own)
                routine, file, line = own[level]
                pc = "$pc" if level == 0 else "$pc - 1"
                out = ours.run(["unwindkit trace dump", f"frame select {level}",
                                f"unwindkit trace lookup `{pc}`"], stripped.exe, stripped_core)
                if ".trace contents:" not in out or f"{routine}+0x" not in out or \
                        f" {file}:{line} " not in out:
                    failures.append(f"lldb {name}: trace dump/lookup output: {out[-800:]}")
                # The side files' DWARF (made from .trace) must pass LLVM's own verifier, and
                # binutils must read from it the -g program's own line table: each row start
                # with the file and line the program's DWARF has there, every line of it.
                dwarfdump = need(llvm("llvm-dwarfdump"))
                program_lines = decoded_lines(os.path.join(work, name, "prog.g"))
                # Side files: added with `target symbols add` (the cache folder) or made by the
                # plugin's in-process server as the module loaded (its `served` folder).
                sides = [os.path.relpath(os.path.join(d, f), ours.cache_dir)
                         for d, _, files in os.walk(ours.cache_dir) for f in files
                         if f.endswith(".debug")]
                if not sides:
                    failures.append(f"lldb {name}: no side file in {ours.cache_dir}")
                for side in sides:
                    side_lines = decoded_lines(os.path.join(ours.cache_dir, side))
                    print(f"lldb {name}: side file {side}: {len(side_lines)} line rows, "
                          f"program's DWARF {len(program_lines)}")
                    wrong = {a: (r, program_lines.get(a)) for a, r in side_lines.items()
                             if program_lines.get(a) != r}
                    if not side_lines or wrong or \
                            set(side_lines.values()) != set(program_lines.values()):
                        failures.append(f"lldb {name}: side file {side} line table: "
                                        f"{len(side_lines)} rows, differing {wrong}, missing "
                                        f"{set(program_lines.values()) - set(side_lines.values())}")
                    v = run([dwarfdump, "--verify", os.path.join(ours.cache_dir, side)], check=False)
                    if v.returncode != 0 or "No errors." not in v.stdout:
                        failures.append(f"lldb {name}: llvm-dwarfdump --verify {side}: "
                                        f"{v.stdout[-600:]}")
            except Skip as e:
                print(f"SKIP lldb {name}: {e}")
            ran += 1
    if ran == 0:
        print("SKIP: no program could run")
        return 0
    print(f"{ran} programs; " + ("all agree" if not failures else f"{len(failures)} problems"))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
