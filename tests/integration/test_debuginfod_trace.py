#!/usr/bin/env python3
"""`.trace` through `unwindkit debuginfod`, with no plugin loaded: the C and Fortran programs
of test_trace_debuggers.py (built -g, restated as .trace, then stripped of DWARF and symbols;
.eh_frame kept, so the debuggers unwind on their own) crash to cores, and a server over the
stripped build hands out files whose .symtab, .debug_info and .debug_line come from .trace.
GDB (debuginfod on) and LLDB (the server in its debuginfod settings) must then show, for every
frame of the program's own sources, the function, file and line that they show on the intact
-g build's core (the truth); without the server they do not (so the test can fail).

Known difference, stated rather than hidden: .trace holds linkage names, and the DWARF restated
from it names routines by them, so GDB shows gfortran's `__trace_solver_MOD_solve` and
`run_case_` where on the -g build it shows the source names `trace_solver::solve` and
`run_case` (the GDB plugin demangles them itself; a plugin-free client cannot). LLDB shows
linkage names on both."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from test_debuginfod import Server  # noqa: E402
from test_trace_debuggers import PROGRAMS, build, compare, gdb_frames, lldb_frames  # noqa: E402
from truth.tools import Skip, lldb, need, run  # noqa: E402


# GDB's source names on the -g build -> the linkage names .trace gives (see above).
GDB_FORTRAN_LINKAGE = {"trace_solver::check_residual": "__trace_solver_MOD_check_residual",
                       "trace_solver::solve": "__trace_solver_MOD_solve",
                       "run_case": "run_case_"}


def gdb_bt(exe, core, env=None, early=()):
    cmd = [need("gdb"), "-nx", "-batch"]
    for c in early:
        cmd += ["-iex", c]
    # Past main: with names from .trace GDB knows `main` (or Fortran's MAIN__) and would stop
    # there, where on the stripped core alone it goes on into libc.
    cmd += ["-ex", "set pagination off", "-ex", "set width 0", "-ex", "set backtrace past-main on",
            exe, core, "-ex", "bt"]
    return run(cmd, env=env, timeout=300, check=False).stdout


def lldb_bt(exe, core, early=()):
    cmd = [lldb(), "-b", "--no-lldbinit"]
    for c in early:
        cmd += ["-O", c]
    cmd += ["-c", core, exe, "-o", "bt"]
    return run(cmd, timeout=300, check=False).stdout


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "integration", "programs")
    failures, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="uk-debuginfod-trace-") as work:
        for name, (_, sources, renames) in PROGRAMS.items():
            try:
                intact, stripped = build(name, work, src)
                intact_core = truth.make_core(intact, truth.X86_64)
                stripped_core = truth.make_core(stripped, truth.X86_64)
            except Skip as e:
                print(f"SKIP {name}: {e}")
                continue
            ran += 1
            own_files = set(sources)
            server = Server([stripped.dir, stripped_core], os.path.join(work, name, "cache"))
            try:
                env = dict(os.environ, DEBUGINFOD_URLS=server.url,
                           DEBUGINFOD_CACHE_PATH=os.path.join(work, name, "gdb-cache"))
                compare(f"gdb {name}", gdb_frames(gdb_bt(intact.exe, intact_core)),
                        gdb_frames(gdb_bt(stripped.exe, stripped_core, env,
                                          ["set debuginfod enabled on"])),
                        gdb_frames(gdb_bt(stripped.exe, stripped_core,
                                          dict(os.environ, DEBUGINFOD_URLS=""))),
                        own_files, {**renames, **(GDB_FORTRAN_LINKAGE if name == "fortran" else {})},
                        failures)
                lldb_cache = os.path.join(work, name, "lldb-cache")
                compare(f"lldb {name}", lldb_frames(lldb_bt(intact.exe, intact_core)),
                        lldb_frames(lldb_bt(stripped.exe, stripped_core, [
                            f"settings set plugin.symbol-locator.debuginfod.server-urls {server.url}",
                            f"settings set plugin.symbol-locator.debuginfod.cache-path {lldb_cache}"])),
                        lldb_frames(lldb_bt(stripped.exe, stripped_core)),
                        own_files, {}, failures)
            finally:
                server.stop()
    for f in failures:
        print(f"FAIL {f}")
    print(f"{ran} programs, {len(failures)} problems")
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
