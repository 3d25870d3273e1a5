#!/usr/bin/env python3
"""Hostile data in the debuggers, the quick subset (issue G; the full campaign is
`scripts/hostile --runs 1000`): 20 runs per debugger from a fixed seed over four programs
(.sframe mutations, .trace mutations, cores whose stacks loop, and a Mach-O image's
__unwind_info mutations), each loaded in GDB and LLDB with the plugin, and every mutated
.sframe/.trace program served by `unwindkit debuginfod`. Fails on any crash or hang.

So that the test can fail: the crash detector must first call a GDB that kills itself with
SIGSEGV and an LLDB that leaves the batch early a crash; and the mutations must reach both
verdicts of our validator (some sections rejected, some accepted) and all four kinds of input.
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from hostile import campaign, debuggers  # noqa: E402
from truth.tools import Skip, lldb  # noqa: E402

SEED = 20261123


def detector_sees_crashes():
    problems = []
    o = debuggers._classify(*debuggers._execute(
        ["gdb", "-batch", "-nx", "-ex", "python import os, signal; os.kill(os.getpid(), "
         "signal.SIGSEGV)", "-ex", f"echo {debuggers.ALIVE}\\n"], 60), [])
    if not o.crashed:
        problems.append(f"a GDB killed by SIGSEGV was not seen as a crash: {o.output[-300:]}")
    o = debuggers._classify(*debuggers._execute(
        [lldb(), "-b", "-x", "-o", "bogus", "-o", f"script print('{debuggers.ALIVE}')"], 60),
        [])
    if not o.crashed:
        problems.append(f"an LLDB batch that stopped early was not seen: {o.output[-300:]}")
    return problems


def main():
    problems = detector_sees_crashes()
    with tempfile.TemporaryDirectory(prefix="uk-hostile-") as work:
        summary_path = os.path.join(work, "summary.json")
        try:
            rc = campaign.main(["--runs", "20", "--seed", str(SEED), "--programs",
                                "opt_mix,threads,trace_c,macho_eh_arm64", "--summary", summary_path,
                                "--crash-dir", os.path.join(work, "kept")])
        except Skip as e:
            print(f"SKIP: {e}")
            return 0
        with open(summary_path) as f:
            summary = json.load(f)
    if rc != 0:
        problems.append("crashes or hangs (see the table above)")
    kinds = summary["validator"]
    for kind in (".sframe", ".trace", "stack", "__unwind_info"):
        if kind not in kinds:
            problems.append(f"no run mutated {kind}")
    verdicts = {v: sum(k.get(v, 0) for k in kinds.values()) for v in ("rejected", "accepted")}
    if not verdicts["rejected"] or not verdicts["accepted"]:
        problems.append(f"the mutations did not reach both verdicts of our validator: {kinds}")
    rows = {row["debugger"]: row for row in summary["debuggers"]}
    for dbg in ("gdb", "lldb"):
        if rows.get(dbg, {}).get("runs") != 20:
            problems.append(f"{dbg}: {rows.get(dbg, {}).get('runs')} runs, not 20")
    # Every .sframe and .trace mutation is served by `unwindkit debuginfod` too.
    served = sum(kinds.get(k, {}).get(v, 0) for k in (".sframe", ".trace")
                 for v in ("rejected", "accepted"))
    if rows.get("server", {}).get("runs") != served or not served:
        problems.append(f"server: {rows.get('server', {}).get('runs')} runs, not {served}")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
