#!/usr/bin/env python3
"""LLDB plugin on a live process (x86_64): LLDB runs the stripped program (no symbols, no
.eh_frame, .sframe kept) to a breakpoint in a frameless leaf six calls deep; with the plugin,
`bt` must give the PCs, and `frame select N` + `register read rip rsp rbp` the values, that
LLDB gives on the intact twin stopped at the same instruction. LLDB must not crash."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lldb_plugin import Lldb, frame_registers, threads  # noqa: E402
from truth.tools import exit_with, need, run  # noqa: E402

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#define NOINLINE __attribute__((noinline))
volatile long sink;
NOINLINE long leaf(long x) { long a[4]; for (int i = 0; i < 4; ++i) a[i] = x * i; sink = a[3]; return a[1] + a[2]; }
NOINLINE long level5(long x) { long r = leaf(x + 5); sink = r; return r + 1; }
NOINLINE long level4(long x) { char buf[64]; snprintf(buf, sizeof buf, "%ld", x); return level5(atol(buf) + 4) + 1; }
NOINLINE long level3(long x) { return level4(x + 3) * 2; }
NOINLINE long level2(long x) { long r = level3(x + 2); sink = r; return r; }
NOINLINE long level1(long x) { return level2(x + 1) + 7; }
int main(int argc, char **argv) { (void)argv; printf("%ld\n", level1(argc)); return 0; }
"""


def leaf_address(exe):
    """File address of `leaf`, from the intact copy's symbols (nm, a reference tool)."""
    for line in run([need("nm"), exe]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "leaf":
            return int(parts[0], 16)
    raise AssertionError("nm found no `leaf`")


def main():
    with tempfile.TemporaryDirectory(prefix="unwindkit-lldb-live-") as work:
        src = os.path.join(work, "live.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        intact, stripped = os.path.join(work, "intact"), os.path.join(work, "stripd")
        os.makedirs(intact)
        os.makedirs(stripped)
        exe = os.path.join(intact, "prog")
        run([need("gcc"), "-O2", "-fomit-frame-pointer", "-Wa,--gsframe", src, "-o", exe])
        run([need("strip"), "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr", exe, "-o",
             os.path.join(stripped, "prog")])
        # A few instructions into the leaf, past any stack adjustment at its entry.
        bp = leaf_address(exe) + 4
        commands = [f"breakpoint set -s prog -a {bp:#x}", "process launch -X false", "bt"]
        native, ours = Lldb(plugin=False), Lldb(plugin=True)
        # The stop report prints frame #0 as a thread of its own: the last block is `bt`.
        want = threads(native.run(commands, os.path.join(intact, "prog")))[-1:]
        got = threads(ours.run(commands, os.path.join(stripped, "prog")))[-1:]
        alone = threads(native.run(commands, os.path.join(stripped, "prog")))[-1:]
        problems = []
        if not want or len(want[0]) < 8:
            problems.append(f"LLDB on the intact copy stopped with {want}: no truth")
        elif got != want:
            problems.append(f"bt differs: intact {[hex(p) for p in want[0]]} "
                            f"stripped {[hex(p) for p in (got[0] if got else [])]}")
        if alone == want:
            problems.append("LLDB alone already unwinds the stripped copy: the test proves nothing")
        frames = list(range(len(want[0]) if want else 0))
        launch = commands[:2]
        want_regs = frame_registers(native, os.path.join(intact, "prog"), None, frames, launch)
        got_regs = frame_registers(ours, os.path.join(stripped, "prog"), None, frames, launch)
        for n in frames:
            if want_regs.get(n) != got_regs.get(n):
                problems.append(f"frame #{n}: intact {want_regs.get(n)} stripped {got_regs.get(n)}")
                break
    for p in problems:
        print("FAIL", p)
    if not problems:
        print(f"ok   live bt and registers in {len(frames)} frames match the intact copy")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
