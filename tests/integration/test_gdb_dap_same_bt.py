#!/usr/bin/env python3
"""An editor on GDB's own DAP server (`gdb -i=dap`, GDB 14 and later) sees the same stacks
with the plugin on a copy stripped of `.eh_frame` as with GDB alone on the copy that kept it
(issue X).

For every x86_64 truth program (truth/cases.py; UNWINDKIT_TRUTH_CASES keeps some), built three
ways (truth/build.py): GDB alone (`-nx`) on the "ehfram" copy is the oracle; GDB with the
plugin sourced first (`-iex source ...`, as the package's gdbinit.d does) on the "stripd"
copy must show, thread by thread, the same frames: each frame's name and pc as the client
reads them (`stackTrace`), and no frame past the oracle's last.
- GDB 17 and later open a core as an editor's attach configuration does (`coreFile`), each
  copy's own core (both run alike: truth/cores.py);
- GDB 14-16's DAP cannot open a core (its attach takes a pid or a remote target only), so
  there each copy runs to its crash under DAP's `launch`, in one environment.
Threads whose frame #0 differs between the two runs (caught elsewhere) are left out and
counted. GDB 13 has no DAP server: the test is skipped there."""
import os
import re
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from dap_client import Dap, stack  # noqa: E402
from test_gdb_cores import plugin_path  # noqa: E402
from truth.tools import Skip, need, side_file_cache  # noqa: E402

FIRST_DAP_GDB = 14  # GDB's NEWS: the DAP interpreter
FIRST_CORE_FILE_GDB = 17  # attach's coreFile (gdb/python/lib/gdb/dap/launch.py)


def gdb_major(gdb):
    first = truth.run([gdb, "--version"]).stdout.splitlines()[0]
    return int(re.search(r"(\d+)\.\d+(\.\d+)?\s*$", first).group(1))


def dap_stacks(gdb, build, core, plugin, env, timeout=300):
    """[[(name, pc), ...] per thread] as GDB's DAP server shows them to an editor."""
    load = ["-iex", f"source {plugin}"] if plugin else []
    dap = Dap([gdb, "-nx", "-q", "-i=dap", "-iex", "set pagination off", *load], env, timeout)
    try:
        dap.request("initialize", {"clientID": "unwindkit-test", "adapterID": "gdb",
                                   "linesStartAt1": True, "columnsStartAt1": True,
                                   "pathFormat": "path"})
        if core:
            seq = dap.send("attach", {"program": build.exe, "coreFile": core})
        else:
            seq = dap.send("launch", {"program": build.exe, "cwd": build.dir, "env": {}})
        dap.request("configurationDone")
        dap.wait_response(seq)
        dap.wait_event("stopped")
        return [[(f.get("name"), int(f["instructionPointerReference"], 16))
                 for f in stack(dap, thread["id"]) if "instructionPointerReference" in f]
                for thread in dap.request("threads").get("threads", [])]
    finally:
        dap.close()


def compare(want, got):
    """(frames equal, frames of the oracle, threads left out, frames past the end, problems).
    DAP lists threads in the order they reach the core, which differs between two runs, and
    gives no LWP to pair them by: each side's threads are compared in the order of their
    stacks."""
    equal = total = left_out = past_end = 0
    problems = []
    if len(want) != len(got):
        problems.append(f"{len(got)} threads, the oracle has {len(want)}")
    want, got = sorted(want), sorted(got)
    for rank, (w, g) in enumerate(zip(want, got)):
        if w[:1] != g[:1]:
            left_out += 1
            continue
        total += len(w)
        equal += sum(1 for a, b in zip(w, g) if a == b)
        past_end += max(0, len(g) - len(w))
        for depth, (a, b) in enumerate(zip(w, g)):
            if a != b:
                problems.append(f"thread {rank} frame {depth}: {b[0]} {b[1]:#x}, "
                                f"the oracle {a[0]} {a[1]:#x}")
                break
        if len(g) < len(w):
            problems.append(f"thread {rank}: {len(g)} frames, the oracle {len(w)}")
    if past_end:
        problems.append(f"{past_end} frames past the end")
    return equal, total, left_out, past_end, problems


def main():
    gdb = need("gdb")
    major = gdb_major(gdb)
    if major < FIRST_DAP_GDB:
        raise Skip(f"GDB {major} has no DAP server (gdb -i=dap came with GDB {FIRST_DAP_GDB})")
    mode = "core" if major >= FIRST_CORE_FILE_GDB else "live"
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    rows, failures = [], 0
    with side_file_cache("uk-gdb-dap-") as work:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work,
               "UNWINDKIT_CACHE_DIR": os.path.join(work, "cache")}
        for case in truth.cases_for("x86_64"):
            try:
                pair = truth.build_pair(case, truth.X86_64, work, src)
                want_core, got_core = (
                    (truth.make_core(pair.eh_frame, truth.X86_64),
                     truth.make_core(pair.stripped, truth.X86_64)) if mode == "core"
                    else (None, None))
                want = dap_stacks(gdb, pair.eh_frame, want_core, None, env)
                got = dap_stacks(gdb, pair.stripped, got_core, plugin_path(), env)
                row = (case.name, *compare(want, got))
            except Skip as e:
                print(f"SKIP {case.name}: {e}")
                continue
            except Exception as e:  # noqa: BLE001 - report every case
                traceback.print_exc()
                row = (case.name, 0, 0, 0, 0, [f"error: {e}"])
            rows.append(row)
            print(f"{'ok  ' if not row[5] else 'FAIL'} {case.name} ({mode})" +
                  "".join(f"\n     {p}" for p in row[5]), flush=True)
            failures += bool(row[5])
    if not rows:
        raise Skip("no case could run")
    print(f"\nGDB {major} DAP ({mode}): {sum(r[1] for r in rows)}/{sum(r[2] for r in rows)} "
          f"frames equal, {sum(r[3] for r in rows)} threads left out, "
          f"{sum(r[4] for r in rows)} frames past the end, {len(rows)} programs")
    return 1 if failures else 0


if __name__ == "__main__":
    truth.tools.exit_with(main)
