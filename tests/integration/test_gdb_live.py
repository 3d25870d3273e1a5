#!/usr/bin/env python3
"""GDB plugin on a live process: the stripped twin runs under GDB to a breakpoint (by address)
inside a frameless leaf six calls deep; with the plugin's Python unwinder, `bt` there gives the PCs GDB
alone gives on the intact twin at the same point, and `unwindkit status` shows frames claimed.
The program is built here (-O2 -fomit-frame-pointer -Wa,--gsframe, not PIE so the breakpoint
address is the link address in both twins)."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gdb_cores import python_unwinder_only, run_gdb  # noqa: E402

PROGRAM = r"""
#define NOINLINE __attribute__((noinline))
volatile int sink;
NOINLINE int leaf(int n) {
  volatile int scratch[16];  /* a stack frame: CFA is rsp + 8 + its size */
  for (int i = 0; i < 16; i++) scratch[i] = n + i;
  sink = scratch[n & 15];
  return scratch[3];
}
NOINLINE int f5(int n) { volatile int b[4] = {n, n, n, n}; return leaf(n + b[1]) + b[2]; }
NOINLINE int f4(int n) { return f5(n * 3) + 1; }
NOINLINE int f3(int n) { volatile int c[8]; c[n & 7] = n; return f4(n + c[n & 7]) + 2; }
NOINLINE int f2(int n) { return f3(n - 1) * 2; }
NOINLINE int f1(int n) { volatile int d[2] = {n, n}; return f2(n + d[1]) + 3; }
int main(int argc, char **argv) { (void)argv; return f1(argc) & 1; }
"""

_BT_PC = re.compile(r"^#\d+\s+(0x[0-9a-f]+)\s", re.MULTILINE)


def build_twins(work, source=PROGRAM):
    """intact/prog and stripd/prog (same-length folder names, so the stacks match)."""
    src = os.path.join(work, "prog.c")
    with open(src, "w") as f:
        f.write(source)
    intact = os.path.join(work, "intact", "prog")
    stripped = os.path.join(work, "stripd", "prog")
    os.makedirs(os.path.dirname(intact))
    os.makedirs(os.path.dirname(stripped))
    subprocess.run(["gcc", "-O2", "-fomit-frame-pointer", "-no-pie", "-Wa,--gsframe", src,
                    "-o", intact], check=True)
    subprocess.run(["strip", "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr", intact,
                    "-o", stripped], check=True)
    return intact, stripped


def leaf_breakpoint(intact):
    """The address of leaf's store to `sink` (objdump of the intact copy): mid-function, its
    array on the stack (or in the red zone), no frame pointer."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", intact], check=True,
                         capture_output=True, text=True).stdout
    body = out.split("<leaf>:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    for line in body:
        if "<sink>" in line:
            return int(line.split(":")[0], 16)
    raise RuntimeError("leaf() has no store to sink:\n" + "\n".join(body))


def live_bt(exe, address, plugin, extra=()):
    # The plugin's Python unwinder (no side files): test_gdb_same_bt.py runs live with them.
    out = run_gdb("gdb", exe, commands=[f"break *{address:#x}", "run", "echo @@BT\\n", "bt",
                                        *extra], plugin=False,
                  early=python_unwinder_only() if plugin else ())
    if "@@BT" not in out:
        raise RuntimeError(f"the breakpoint was not reached:\n{out}")
    bt, rest = out.split("@@BT\n", 1)[1], ""
    if extra:
        bt, rest = bt.split("@@END\n", 1) if "@@END\n" in bt else (bt, "")
    return [int(pc, 16) for pc in _BT_PC.findall(bt)], bt, rest


def main():
    with tempfile.TemporaryDirectory(prefix="uk-gdb-live-") as work:
        intact, stripped = build_twins(work)
        address = leaf_breakpoint(intact)
        want, want_text, _ = live_bt(intact, address, plugin=False)
        got, got_text, status = live_bt(stripped, address, plugin=True,
                                        extra=["echo @@END\\n", "unwindkit status"])
        alone, _, _ = live_bt(stripped, address, plugin=False)
    problems = []
    if len(want) < 7:
        problems.append(f"the intact bt has {len(want)} frames, expected leaf, f5..f1 and main:\n"
                        f"{want_text}")
    if got[:len(want)] != want:
        problems.append(f"bt differs from the intact twin's:\nwant\n{want_text}\ngot\n{got_text}")
    if alone[:len(want)] == want:
        problems.append("GDB alone already unwinds the stripped copy: the test proves nothing")
    claimed = re.search(r"frames claimed: (\d+)", status)
    if not claimed or int(claimed.group(1)) < 6:
        problems.append(f"unwindkit status does not show the frames it claimed:\n{status}")
    for p in problems:
        print("FAIL", p)
    print(f"live bt at {address:#x}: {len(want)} frames expected, "
          f"{sum(1 for a, b in zip(want, got) if a == b)} equal")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
