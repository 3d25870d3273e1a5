#!/usr/bin/env python3
"""A module that keeps its `.eh_frame` beside `.sframe` (what `-Wa,--gsframe` leaves, and what a
distribution's SFrame build ships): LLDB with the plugin must show it as LLDB alone does, and
must not make it again (issue I: no cost a person would notice).

The module's own CFI describes every function its SFrame does, so a side file would add nothing.
A session that found so must leave the module as LLDB made it, whether the plugin was loaded
before the target or after: before this test, the plugin unloaded and loaded it again before
the first `bt`, and waited up to a second for LLDB to drop it. LLDB says when a target unloads a
module (SBTarget's eBroadcastBitModulesUnloaded): from the target's creation to the end of
`bt` and `register read`, no such event may name it (LLDB alone sends none).
The backtrace, whole, and frame 1's registers must be LLDB's own on the same copy, and LLDB's
symbol file for the module must be the module itself.
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lldb_plugin import SYMBOL_FILE, Lldb, plugin_path, tagged  # noqa: E402
from test_lldb_live import PROGRAM, leaf_address  # noqa: E402
from truth.tools import exit_with, need, run  # noqa: E402

# Imported into LLDB's Python: listens to the selected target for modules unloaded.
WATCH = '''
import lldb
listener = None
def start(debugger):
    global listener
    listener = lldb.SBListener("unwindkit-own-cfi-test")
    debugger.GetSelectedTarget().GetBroadcaster().AddListener(
        listener, lldb.SBTarget.eBroadcastBitModulesUnloaded)
def report():
    event, names = lldb.SBEvent(), []
    while listener.GetNextEvent(event):
        for i in range(lldb.SBTarget.GetNumModulesFromEvent(event)):
            module = lldb.SBTarget.GetModuleAtIndexFromEvent(i, event)
            names.append(module.GetFileSpec().GetFilename())
    print("UNLOADED", " ".join(names) if names else "-")
'''


def after_launch(output):
    """What `bt` and the commands after it printed, less the thread's id (each run has its
    own) and our tagged lines."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("(lldb) bt"))
    return [re.sub(r"tid = \w+", "tid = ?", line) for line in lines[start:]
            if not line.startswith(("UNLOADED", "SYMBOLS")) and "script " not in line]


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="unwindkit-lldb-own-cfi-") as work:
        src = os.path.join(work, "own.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        intact = os.path.join(work, "intact")
        os.makedirs(os.path.join(work, "both"))
        prog = os.path.join(work, "both", "prog")
        run([need("gcc"), "-O2", "-fomit-frame-pointer", "-Wa,--gsframe", src, "-o", intact])
        run([need("strip"), "--strip-all", intact, "-o", prog])
        sections = run([need("readelf"), "-SW", prog]).stdout
        if ".eh_frame " not in sections or ".sframe " not in sections:
            raise AssertionError(f"the copy should keep .eh_frame and .sframe:\n{sections}")
        watch = os.path.join(work, "uk_watch.py")
        with open(watch, "w") as f:
            f.write(WATCH)
        bp = leaf_address(intact) + 4
        watching = [f"command script import {watch}", "script uk_watch.start(lldb.debugger)"]
        commands = [f"breakpoint set -s prog -a {bp:#x}", "process launch -X false", "bt",
                    "frame select 1", "register read rip rsp rbx rbp r12 r13 r14 r15",
                    "script uk_watch.report()", SYMBOL_FILE]
        alone = Lldb(plugin=False).run(watching + commands, prog)
        if len([line for line in after_launch(alone) if "frame #" in line]) < 8:
            raise AssertionError(f"LLDB alone stopped elsewhere: no truth\n{alone}")
        if tagged(alone, "UNLOADED") != "-":
            raise AssertionError(f"LLDB alone unloaded {tagged(alone, 'UNLOADED')}: no truth")
        # The plugin loaded first (as an lldbinit or lldb-dap's initCommands load it), and
        # after the module was made.
        for order, ours in (
                ("loaded first", Lldb(plugin=True).run(watching + commands, prog)),
                ("loaded after the target", Lldb(plugin=False).run(
                    watching + [f"plugin load {plugin_path()}"] + commands, prog))):
            if after_launch(ours) != after_launch(alone):
                problems.append(f"{order}: bt and frame 1's registers differ from LLDB alone on "
                                "the same copy:\n" + "\n".join(after_launch(ours))
                                + "\n-- LLDB alone --\n" + "\n".join(after_launch(alone)))
            if tagged(ours, "UNLOADED") != "-":
                problems.append(f"{order}: LLDB unloaded {tagged(ours, 'UNLOADED')} in the "
                                "session: a module with nothing to add was made again")
            if tagged(ours, "SYMBOLS") != tagged(alone, "SYMBOLS"):
                problems.append(f"{order}: LLDB's symbol file for prog: "
                                f"{tagged(ours, 'SYMBOLS')}, LLDB alone {tagged(alone, 'SYMBOLS')}")
    for p in problems:
        print("FAIL", p)
    if not problems:
        print("ok   .eh_frame and .sframe kept, the plugin loaded first and after the target: "
              "the whole bt and frame 1's registers as LLDB alone gives them, the module never "
              "unloaded, no side file")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
