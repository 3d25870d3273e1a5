#!/usr/bin/env python3
"""LLDB plugin, a module too large to wait for (issue I): its first session gets the quick side
file (no prologue analysis) and the analyzed one is made by a detached process for the
sessions after.

The stripped copy of a small program (no symbols, no .eh_frame, .sframe kept) is run to a
breakpoint in a frameless leaf with `unwindkit set side-file-wait-limit 0`, so that its
module counts as too large. First session: `bt` must give the PCs LLDB gives on the intact
copy, `unwindkit status` must say the module has its quick side file, and LLDB must end
normally (the detached process is no child it waits for). Then, within a minute, the served
folder must hold the analyzed file and no quick one. Second session: the same `bt`, no quick
side file, and LLDB's symbol file is the analyzed file kept there.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lldb_plugin import Lldb, threads  # noqa: E402
from test_lldb_kept_side_file import files_under  # noqa: E402
from test_lldb_live import PROGRAM, leaf_address  # noqa: E402
from truth.tools import exit_with, need, run, side_file_cache  # noqa: E402

# `unwindkit status`'s line for a module given its quick file.
QUICK_LINE = "  quick side file (SFrame over the side-file-wait-limit)"
# The inode of LLDB's symbol file for `prog` (a link LLDB's download cache loses at exit).
SYMBOL_INODE = ("script import os; print('INODE', os.stat(lldb.target.module['prog']"
                ".GetSymbolFileSpec().fullpath).st_ino)")
MAKE_SECONDS = 60  # the detached process waits for LLDB to be idle, then makes a small file


def served_files(cache, suffix):
    return [f for f in files_under(cache, "/served/") if f.endswith(suffix)]


def main():
    problems = []
    with side_file_cache("unwindkit-lldb-quick-") as work:  # holds the cache
        src = os.path.join(work, "quick.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        # Both copies are named `prog`: the breakpoint goes by that module name.
        intact, prog = os.path.join(work, "intact", "prog"), os.path.join(work, "run", "prog")
        for path in (intact, prog):
            os.makedirs(os.path.dirname(path))
        run([need("gcc"), "-O2", "-fomit-frame-pointer", "-Wa,--gsframe", src, "-o", intact])
        run([need("strip"), "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr", intact,
             "-o", prog])
        bp = leaf_address(intact) + 4
        commands = [f"breakpoint set -s prog -a {bp:#x}", "process launch -X false", "bt",
                    "unwindkit status", SYMBOL_INODE]
        want = threads(Lldb(plugin=False).run(commands[:3], intact))[-1:]
        if not want or len(want[0]) < 8:
            raise AssertionError(f"LLDB on the intact copy stopped with {want}: no truth")
        cache = os.path.join(work, "cache")
        ours = Lldb(plugin=True, cache_dir=cache, setup=["unwindkit set side-file-wait-limit 0"])

        first = ours.run(commands, prog)
        if threads(first)[-1:] != want:
            problems.append(f"first session: bt {threads(first)[-1:]}, intact {want}")
        if QUICK_LINE not in first:
            problems.append("first session: `unwindkit status` names no quick side file")

        deadline = time.time() + MAKE_SECONDS
        while time.time() < deadline and (served_files(cache, ".quick.debug") or
                                          not served_files(cache, ".lldb.debug")):
            time.sleep(0.2)
        analyzed = served_files(cache, ".lldb.debug")
        if len(analyzed) != 1 or served_files(cache, ".quick.debug"):
            problems.append(f"after {MAKE_SECONDS} s: analyzed files {analyzed}, quick files "
                            f"{served_files(cache, '.quick.debug')}: the detached process made "
                            "no analyzed file, or left the quick one")

        second = ours.run(commands, prog)
        if threads(second)[-1:] != want:
            problems.append(f"second session: bt {threads(second)[-1:]}, intact {want}")
        if QUICK_LINE in second:
            problems.append("second session: the quick side file again, not the analyzed one")
        taken = next((int(line.split()[1]) for line in second.splitlines()
                      if line.startswith("INODE ")), None)
        if len(analyzed) == 1 and taken != os.stat(analyzed[0]).st_ino:
            problems.append(f"second session: LLDB's symbol file (inode {taken}) is not the "
                            f"analyzed file {analyzed[0]}")
    for p in problems:
        print("FAIL", p)
    if not problems:
        print(f"ok   {len(want[0])} frames as on the intact copy with the quick side file, then "
              "with the analyzed one the detached process made")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
