#!/usr/bin/env python3
"""One lldb-dap session on a core, as an editor opens it, for bench/debugger_pairs.py's
`lldb-dap` rows: `initialize`, `attach` with `coreFile` (the plugin, if given, loaded in
`initCommands`, before the target exists, as an editor's launch configuration loads it),
`configurationDone`, then `threads` and `stackTrace` of every thread to its last frame: what the
editor shows once the core is open. Those requests are the "first" figure, and the same
requests again the "warm" one.

Prints `BENCHSTART <time lldb-dap was started>` and then, as debugger_pairs.py reads a
debugger's timer script, `BENCH <time the stacks were all shown> <first> <warm> <frames>`;
the driver's own start (a Python interpreter) is left out of "to first" on both sides.
The requests are the integration tests' (tests/integration/dap_client.py).
Usage: dap_session.py ADAPTER PROGRAM CORE [PLUGIN]
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from dap_client import Dap, open_core, stack  # noqa: E402


def all_stacks(dap):
    """Frames shown, every thread to its end."""
    return sum(len(stack(dap, thread["id"]))
               for thread in dap.request("threads").get("threads", []))


def main():
    adapter, program, core = sys.argv[1:4]
    init = [f"plugin load {sys.argv[4]}"] if len(sys.argv) > 4 else []
    print(f"BENCHSTART {time.time():.6f}", flush=True)
    dap = Dap(adapter, timeout=1800)
    try:
        open_core(dap, program, core, init)
        shown = time.perf_counter()
        frames = all_stacks(dap)
        done = time.time()
        first = time.perf_counter() - shown
        again = time.perf_counter()
        all_stacks(dap)
        warm = time.perf_counter() - again
    finally:
        dap.close()
    print(f"BENCH {done:.6f} {first:.6f} {warm:.6f} {frames}", flush=True)


if __name__ == "__main__":
    main()
