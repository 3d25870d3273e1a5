#!/usr/bin/env python3
"""Times a debugger on a core for scripts/bench's scale cases: the debugger alone on the
`.eh_frame` twin against the same debugger with the unwindkit plugin on the SFrame twin
(bench/scale_cases.py makes both). Every run is a fresh debugger; rounds alternate native,
plugin with an empty side-file cache (a module's first session), plugin with the cache kept
(every later session); medians of RUNS rounds are compared.

Per run: "to first" is from starting the debugger to the end of the first command (loading,
the plugin's side files and the command: what a user waits for); "first" and "warm" are the
first command and the same command again in that session, timed inside the debugger (GDB:
after `maint flush register-cache`, so frames are recomputed from kept tables); "peak MB" is
the debugger's maximum resident set and "cpu" its user + system time for the whole session
(getrusage of the child: steadier than wall time on a shared machine). The cache is the folder
UNWINDKIT_CACHE_DIR names: a plugin that keeps no side file across sessions there shows the
same figures in both plugin rows. After a run that left GDB's detached process making a
large module's whole side file, the next run waits for it (settle).
With UNWINDKIT_BENCH_BASELINE_PLUGIN (another build's plugin, e.g. the base commit's), its
two rows run in the same alternating rounds: before and after side by side in one run.
lldb-dap: an editor's session (bench/dap_session.py: attach with `coreFile`, then the stack of
every thread; COMMAND only names it), its peak memory the adapter's and its CPU the adapter's
and the driver's (the same driver on every side).
Two last sides per plugin, "own CFI", load it on the `.eh_frame` twin itself (which keeps its
`.sframe` too, as `-Wa,--gsframe` leaves a program): nothing for the plugin to add, so what it
costs a debugger on the binaries most users have, in a module's first session (empty cache:
the plugin finds there is nothing to add) and in every later one (cache kept: the answer
remembered).
UNWINDKIT_BENCH_CPUS (a `taskset -c` list) runs every side on those CPUs: on a machine whose
CPUs differ in speed (one here runs GDB's start 40 % slower than the other), which CPU a run
lands on otherwise decides more of its time than the plugin does.
Usage: debugger_pairs.py gdb|lldb|lldb-dap PLUGIN CASE_DIR COMMAND RUNS TITLE TARGET
  TARGET applies to the "to first" ratio of the empty-cache plugin run.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GDB_SCRIPT = """
import time
import gdb
gdb.execute("set pagination off")
gdb.execute("set backtrace limit unlimited")
def timed(command):
    start = time.perf_counter()
    out = gdb.execute(command, to_string=True)
    return time.perf_counter() - start, out
first, out = timed({command!r})
done = time.time()
gdb.execute("maint flush register-cache")
warm, _ = timed({command!r})
frames = sum(1 for line in out.splitlines() if line.startswith("#"))
print(f"BENCH {{done:.6f}} {{first:.6f}} {{warm:.6f}} {{frames}}")
"""

LLDB_SCRIPT = """
import time
import lldb
def timed(debugger, command):
    result = lldb.SBCommandReturnObject()
    start = time.perf_counter()
    debugger.GetCommandInterpreter().HandleCommand(command, result)
    return time.perf_counter() - start, result.GetOutput()
def run(debugger):
    first, out = timed(debugger, {command!r})
    done = time.time()
    warm, _ = timed(debugger, {command!r})
    frames = out.count("frame #")
    print(f"BENCH {{done:.6f}} {{first:.6f}} {{warm:.6f}} {{frames}}")
"""


def command_line(debugger, plugin, case_dir, side, script):
    exe = os.path.join(case_dir, side, "prog")
    core = os.path.join(case_dir, side, "core.prog")
    pin = os.environ.get("UNWINDKIT_BENCH_CPUS")
    return (["taskset", "-c", pin] if pin else []) + \
        debugger_line(debugger, plugin, exe, core, script)


# The release's LLDB (scripts/bench exports it from releases.tsv).
LLDB = os.environ.get("UNWINDKIT_LLDB_VERSION", "22")


def debugger_line(debugger, plugin, exe, core, script):
    if debugger == "lldb-dap":
        return [sys.executable, os.path.join(HERE, "dap_session.py"), f"lldb-dap-{LLDB}",
                exe, core, *([plugin] if plugin else [])]
    if debugger == "gdb":
        # -iex: the plugin is loaded before the files, as the package's gdbinit.d does.
        load = ["-iex", f"source {plugin}"] if plugin else []
        return ["gdb", "-batch", "-nx", *load, exe, core, "-x", script]
    load = ["-o", f"plugin load {plugin}"] if plugin else []
    folder, name = os.path.split(script)
    module = os.path.splitext(name)[0]
    return [f"lldb-{LLDB}", "-b", "-x", *load, "-o", f"target create {exe} --core {core}",
            "-o", f"command script import {script}", "-o", f"script {module}.run(lldb.debugger)"]


def one_run(cmd, cache):
    """(to first, first, warm, frames, peak MB, cpu s) of one fresh debugger."""
    env = dict(os.environ, UNWINDKIT_CACHE_DIR=cache)
    start = time.time()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    line = next((l for l in out.splitlines() if l.startswith("BENCH ")), None)
    if line is None:
        raise SystemExit(f"bench: no timing from {' '.join(cmd)}:\n{out[-2000:]}")
    # A driver (dap_session.py) says when it started the debugger: its own start is not the
    # debugger's time.
    started = next((l for l in out.splitlines() if l.startswith("BENCHSTART ")), None)
    if started is not None:
        start = float(started.split()[1])
    done, first, warm, frames = line.split()[1:]
    return (float(done) - start, float(first), float(warm), int(frames),
            usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def settle(cache, timeout=180):
    """Waits while a detached process makes a module's whole side file (a module too large to
    wait for: GDB's side_files.py, the LLDB plugin's module_server.cpp): the next round must
    not share the machine with it, and the kept cache must hold the whole file. GDB's folder
    holds `K.entry.gdb.debug` until `K.gdb.debug` is made; LLDB's `served/` a `.quick.debug`
    file until the analyzed file replaces it. Returns at once when nothing is being made."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        names = [n for _, _, files in os.walk(cache) for n in files]
        entry = [n for n in names if n.endswith(".entry.gdb.debug")]
        whole = {n[:-len(".gdb.debug")] for n in names
                 if n.endswith(".gdb.debug") and not n.endswith(".entry.gdb.debug")}
        if all(n[:-len(".entry.gdb.debug")] in whole for n in entry) and \
                not any(n.endswith(".quick.debug") for n in names) and \
                not any(".tmp" in n for n in names):  # a file being written
            return
        time.sleep(0.2)


def main():
    debugger, plugin, case_dir, command, runs, title, target = sys.argv[1:8]
    runs, target = int(runs), float(target)
    work = tempfile.mkdtemp(prefix="uk-bench-pairs.")
    script = os.path.join(work, "uk_bench_timer.py")
    with open(script, "w") as f:  # (lldb-dap: the requests of dap_session.py instead)
        f.write((GDB_SCRIPT if debugger == "gdb" else LLDB_SCRIPT).format(command=command))
    native = command_line(debugger, None, case_dir, "ehfram", script)
    plugins = {"plugin": plugin}
    if os.environ.get("UNWINDKIT_BENCH_BASELINE_PLUGIN"):
        plugins["baseline"] = os.environ["UNWINDKIT_BENCH_BASELINE_PLUGIN"]
    sides = {"native": []}
    for name in plugins:
        sides[f"{name}, empty cache"] = []
        sides[f"{name}, cache kept"] = []
        sides[f"{name}, own CFI, empty cache"] = []
        sides[f"{name}, own CFI, cache kept"] = []
    for name, path in plugins.items():  # fills the kept caches
        for twin in ("stripd", "ehfram"):
            one_run(command_line(debugger, path, case_dir, twin, script),
                    os.path.join(work, f"kept-{name}-{twin}"))
            settle(os.path.join(work, f"kept-{name}-{twin}"))
    for i in range(runs):
        sides["native"].append(one_run(native, os.path.join(work, "unused")))
        for name, path in plugins.items():
            ours = command_line(debugger, path, case_dir, "stripd", script)
            empty = os.path.join(work, f"empty-{name}-{i}")
            sides[f"{name}, empty cache"].append(one_run(ours, empty))
            settle(empty)
            sides[f"{name}, cache kept"].append(
                one_run(ours, os.path.join(work, f"kept-{name}-stripd")))
            # The plugin loaded where the module keeps its CFI beside SFrame (a distribution's
            # SFrame build): it has nothing to add, and should cost nothing either.
            own = command_line(debugger, path, case_dir, "ehfram", script)
            sides[f"{name}, own CFI, empty cache"].append(
                one_run(own, os.path.join(work, f"empty-{name}-ehfram-{i}")))
            settle(os.path.join(work, f"empty-{name}-ehfram-{i}"))
            sides[f"{name}, own CFI, cache kept"].append(
                one_run(own, os.path.join(work, f"kept-{name}-ehfram")))
    subprocess.run(["rm", "-rf", work], check=False)

    med = {name: [statistics.median(r[k] for r in rows) for k in range(6)]
           for name, rows in sides.items()}
    rows = {name: f"{name}, {'.eh_frame' if name == 'native' or 'own CFI' in name else 'SFrame'}"
                  " twin" for name in med}
    width = max(len(row) for row in rows.values()) + 2
    print(f"{title}   {debugger}, `{command}`, median of {runs} alternating rounds")
    print(f"{'':{width + 2}}to first (s)  first (s)  warm (s)  peak MB  frames  cpu (s)")
    for name, (to_first, first, warm, frames, peak, cpu) in med.items():
        print(f"  {rows[name]:{width}}{to_first:10.3f}  {first:9.3f}  {warm:8.3f}  "
              f"{peak:7.0f}  {frames:6.0f}  {cpu:7.3f}")
    n = med["native"]
    for name in list(med)[1:]:
        o = med[name]
        print(f"  {'ratio ' + name + ' / native':{width}}{o[0] / n[0]:10.2f}  {o[1] / n[1]:9.2f}  "
              f"{o[2] / n[2]:8.2f}  {o[4] / n[4]:7.2f}          {o[5] / n[5]:7.2f}")
    for name in list(med)[1:]:
        rounds = [f"{o[0] / n[0]:.2f}" for n, o in zip(sides["native"], sides[name])]
        print(f"  per round, to first, {name}: {' '.join(rounds)}")
    print(f"  target: to first, plugin, empty cache <= {target:.2f}")


if __name__ == "__main__":
    main()
