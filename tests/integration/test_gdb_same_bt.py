#!/usr/bin/env python3
"""GDB prints the same `thread apply all bt` with the plugin on a copy stripped of `.eh_frame`
as GDB alone on a copy that kept it (issue H2).

For every truth program (truth/cases.py), each built three ways (truth/build.py): the oracle is
GDB alone on the "ehfram" copy (symbols stripped, `.eh_frame` kept), in its own run; it must
equal, line for line, GDB with the plugin on the "stripd" copy (symbols and `.eh_frame`
stripped, `.sframe` kept):
- x86_64 cores of the stripped copy (SFrame v1, binutils 2.40) and of its v2 and v3 twins
  (truth/twins.py, the stripped copy's core), the shared-library case included;
- AArch64 cores (static, crashed under qemu-aarch64) in gdb-multiarch;
- live: each copy run under GDB to the crash (x86_64 `run`; AArch64 under qemu-aarch64's GDB
  stub, `target remote` + `continue`).
Core runs source the plugin after the files load, live runs before (both paths attach side
files). Normalized: thread LWP numbers (threads pair by creation order), GDB's thread numbers (they
follow the order threads reach the core) and the copies' folders. Threads whose frame #0 differs
between the two runs (a live thread caught elsewhere) are left out and counted. Frames the
plugin run prints past the oracle's last frame are counted: 0 expected everywhere. With the
plugin, GDB must write no line naming a side file to stderr (its terminal): GDB alone on the
`.eh_frame` copy writes none.
One GDB run per core (or live run), every command batched.

`--side-files-off` runs the plugin with `unwindkit set side-files off` (the Python unwinder
alone), to show what the check catches. `--side-files-later` runs it as in the first session
of a module too large to wait for (`unwindkit set side-file-wait-limit 0`, an empty cache
before every run): the side file holds the entry point's rule alone, the Python unwinder does
the program's frames, and every line must still be GDB's own.
"""
import dataclasses
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from test_gdb_cores import plugin_path  # noqa: E402
from truth.tools import side_file_cache  # noqa: E402
from truth.twins import make_twins  # noqa: E402

MARK = "@@UNWINDKIT-BT"
STATUS_MARK = "@@UNWINDKIT-STATUS"
# `Thread N (... (LWP 123))` (native), `Thread N (Thread 1.123 (CPU#0 ...))` (qemu's stub).
_THREAD = re.compile(r"^Thread \d+ \(.*?\b(?:LWP |process |Thread \d+\.)(\d+)\b")
_THREAD_NUMBER = re.compile(r"^Thread \d+ ")
_QEMU_PID = re.compile(r"\(Thread \d+\.")
_FRAME = re.compile(r"^#\d+\s")


@dataclasses.dataclass
class Row:
    arch: str
    program: str
    variant: str
    equal: int = 0
    total: int = 0
    excluded: int = 0
    past_end: int = 0
    problem: str = ""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_bt(arch, exe, core, env, plugin, live, early=(), mode="on"):
    """(`thread apply all bt` lines, `unwindkit status` text or "", the lines GDB wrote to its
    terminal's stderr that name a side file) of one GDB run on `exe` with `core`, or live to
    the crash (under qemu's GDB stub for AArch64, run as truth/cores.py runs it for a core)."""
    runner = None
    if live and arch.runner:
        port = _free_port()
        runner = subprocess.Popen(["env", "-i", truth.tools.need("setarch"), "-R",
                                   truth.tools.need(arch.runner[0]), *arch.runner[1:], "-g",
                                   str(port), "./" + os.path.basename(exe)],
                                  cwd=os.path.dirname(exe), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
    try:
        return _gdb_bt(truth.tools.need(arch.gdb), exe, core, env, plugin, live, early,
                       mode, f"target remote 127.0.0.1:{port}" if runner else "run")
    finally:
        if runner:
            runner.kill()
            runner.wait()


# The plugin settings of each mode (main()'s flags), given before the files load.
MODE_SETTINGS = {"on": (), "off": ("unwindkit set side-files off",),
                 "later": ("unwindkit set side-file-wait-limit 0",)}


def _gdb_bt(gdb, exe, core, env, plugin, live, early, mode, start):
    cmd = [gdb, "-batch", "-nx", "-iex", "set pagination off", "-iex", "set width 0",
           "-iex", "set startup-with-shell off"]
    for c in early:
        cmd += ["-iex", c]
    # Live runs source the plugin before the program loads, core runs after it and the core.
    source_first = plugin and (live or mode != "on")
    if source_first:
        cmd += ["-iex", f"source {plugin_path()}"]
        for setting in MODE_SETTINGS[mode]:
            cmd += ["-iex", setting]
    if plugin and mode == "later":  # every run a module's first session
        shutil.rmtree(env["UNWINDKIT_CACHE_DIR"], ignore_errors=True)
    cmd.append(exe)
    if core:
        cmd.append(core)
    if plugin and not source_first:
        cmd += ["-ex", f"source {plugin_path()}"]
    if live:
        cmd += ["-ex", start]
        if start != "run":
            cmd += ["-ex", "continue"]
    cmd += ["-ex", f"echo {MARK}\\n", "-ex", "thread apply all bt"]
    if plugin:
        cmd += ["-ex", f"echo {STATUS_MARK}\\n", "-ex", "unwindkit status"]
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=900,
                       env=env, cwd=os.path.dirname(exe))
    if "Traceback" in p.stderr or "Python Exception" in p.stderr:
        raise RuntimeError(f"Python error inside GDB: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    if MARK not in p.stdout:
        raise RuntimeError(f"GDB printed no backtrace: {' '.join(cmd)}\n{p.stdout[-1000:]}\n"
                           f"{p.stderr[-1000:]}")
    bt, _, status = p.stdout.split(MARK + "\n", 1)[1].partition(STATUS_MARK + "\n")
    # GDB on the `.eh_frame` copy says nothing about a side file ("section .data not found in
    # FILE" was printed for each section a side file lacked, in every session).
    cache = env.get("UNWINDKIT_CACHE_DIR")
    side_lines = [line for line in p.stderr.splitlines() if cache and cache in line]
    return bt.splitlines(), status, side_lines


def threads(lines, folders):
    """The bt as thread blocks (header line + frame lines), normalized, in LWP order.

    Each run is another process: its LWP numbers differ, and so does the order its threads
    reach the core (GDB's thread numbers follow it). Threads pair by creation order (LWP
    rank); each LWP number, wherever it appears (the header, `.reg-xstate/LWP`, a futex
    argument naming a thread), reads as its rank, and GDB's thread number is dropped."""
    blocks = []
    for line in lines:
        for folder, name in folders:
            line = line.replace(folder, name)
        line = line.rstrip()
        if _THREAD.match(line):
            blocks.append([line])
        elif blocks and line:
            blocks[-1].append(line)
    lwps = sorted(int(_THREAD.match(b[0]).group(1)) for b in blocks)
    if not lwps:
        return []
    rank = {str(lwp): f"<thread {i}>" for i, lwp in enumerate(lwps)}
    # After "LWP ", "." (qemu's pid.tid), "/" (.reg-xstate/LWP) or "=" (an argument): never
    # a frame number.
    number = re.compile(r"(?:(?<=LWP )|(?<=\.)|(?<=/)|(?<==))(" + "|".join(rank) + r")\b")
    normalized = []
    for block in sorted(blocks, key=lambda b: int(_THREAD.match(b[0]).group(1))):
        # GDB 16 and later print qemu's stub threads as pid.tid with qemu's own pid (GDB 13:
        # 1.tid), which each run has anew.
        block[0] = _QEMU_PID.sub("(Thread <process>.", _THREAD_NUMBER.sub("Thread ", block[0]))
        normalized.append([number.sub(lambda m: rank[m.group(1)], line) for line in block])
    return normalized


def compare(row, oracle, ours):
    if len(oracle) != len(ours):
        row.problem = f"{len(oracle)} threads in the oracle, {len(ours)} with the plugin"
        return
    first_diff = None
    for want, got in zip(oracle, ours):
        frame0 = [[l for l in b if l.startswith("#0 ")][:1] for b in (want, got)]
        if frame0[0] != frame0[1]:
            row.excluded += 1
            continue
        row.total += max(len(want), len(got))
        row.equal += sum(a == b for a, b in zip(want, got))
        row.past_end += max(0, sum(bool(_FRAME.match(l)) for l in got) -
                            sum(bool(_FRAME.match(l)) for l in want))
        if first_diff is None and want != got:
            i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b),
                     min(len(want), len(got)))
            first_diff = (f"{want[0]}: line {i}: oracle "
                          f"{want[i] if i < len(want) else '(nothing)'!r}, plugin "
                          f"{got[i] if i < len(got) else '(nothing)'!r}")
    if first_diff:
        row.problem = first_diff


def stderr_problem(side_lines):
    """'' unless GDB wrote lines naming a side file to its terminal (GDB alone writes none)."""
    if not side_lines:
        return ""
    return f"GDB wrote about a side file: {side_lines[:3]} ({len(side_lines)} lines)"


def side_file_problem(status, exe, want_side_file, mode):
    """'' if `unwindkit status` says `exe` got a side file exactly when it should (in "later"
    mode, the one holding the entry point's rule alone)."""
    block = status.split(f"  {exe}\n", 1)[-1].split("\n  /", 1)[0] if exe in status else ""
    if not block:
        return f"unwindkit status does not list {exe}:\n{status}"
    if mode == "later" and want_side_file:  # the whole file is for later sessions
        if "is being made for later sessions" not in block:
            return f"unwindkit status: no side file being made for later sessions:\n{block}"
        return ""
    has = re.search(r"^    side file ", block, re.MULTILINE) is not None
    if has != want_side_file:
        return f"unwindkit status: side file {'expected' if want_side_file else 'unexpected'}:\n" \
               f"{block}"
    return ""


def whole_side_files(cache, timeout=60):
    """The whole side files (not the entry point's alone) in `cache`, once the first session's
    detached process has made one; [] if none comes within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        names = [n for n in os.listdir(cache) if n.endswith(".gdb.debug")
                 and not n.endswith(".entry.gdb.debug") and not n.startswith(".tmp-")] \
            if os.path.isdir(cache) else []
        if names:
            return [os.path.join(cache, n) for n in names]
        time.sleep(0.2)
    return []


def check_program(arch, case, work, src, env, mode):
    pair = truth.build_pair(case, arch, work, src)
    stripped_core = truth.make_core(pair.stripped, arch)
    oracle_core = truth.make_core(pair.eh_frame, arch)
    folders = [(pair.stripped.dir, "<copy>"), (pair.eh_frame.dir, "<copy>")]
    # A stripped copy that kept .eh_frame (cxx_terminate) has CFI wherever it has SFrame.
    want_side_file = not (case.keep_eh_frame or mode == "off")

    def plugin_row(variant, oracle, exe, core, early=(), extra=()):
        row = Row(arch.name, case.name, variant)
        lines, status, side_lines = run_bt(arch, exe, core, env, True, core is None, early, mode)
        compare(row, oracle, threads(lines, [*extra, *folders, (os.path.dirname(exe), "<copy>")]))
        row.problem = (row.problem or side_file_problem(status, exe, want_side_file, mode)
                       or stderr_problem(side_lines))
        return row

    oracle = threads(run_bt(arch, pair.eh_frame.exe, oracle_core, env, False, False)[0], folders)
    rows = [plugin_row("v1 core", oracle, pair.stripped.exe, stripped_core)]
    if mode == "later" and want_side_file:
        # The session after: the whole side file the first one had made in the background,
        # attached from the cache; GDB's own unwinder does every frame.
        row = Row(arch.name, case.name, "v1 core, next session")
        made = whole_side_files(env["UNWINDKIT_CACHE_DIR"])
        lines, status, side_lines = run_bt(arch, pair.stripped.exe, stripped_core, env, True,
                                           False, (), "on")
        compare(row, oracle, threads(lines, [*folders, (pair.stripped.dir, "<copy>")]))
        if not made:
            row.problem = row.problem or "the first session made no whole side file"
        elif f"side file {made[0]}" not in status:
            row.problem = row.problem or f"the next session did not attach {made[0]}:\n{status}"
        else:
            row.problem = row.problem or stderr_problem(side_lines)
        rows.append(row)
    if arch is truth.X86_64:
        for twin in make_twins(pair.stripped):
            early, extra = (), ()
            if twin.bt_args:  # the twin's libraries under a sysroot at the core's paths
                sysroot = twin.bt_args[1]
                early, extra = (f"set sysroot {sysroot}",), ((sysroot, ""),)
            rows.append(plugin_row(f"{twin.label} core", oracle, twin.build.exe, stripped_core,
                                   early, extra))
    live_oracle = threads(run_bt(arch, pair.eh_frame.exe, None, env, False, True)[0], folders)
    rows.append(plugin_row("v1 live", live_oracle, pair.stripped.exe, None))
    return rows


def print_table(rows):
    head = ("arch", "program", "run", "lines equal/total", "threads excluded", "past end")
    table = [head] + [(r.arch, r.program, r.variant, f"{r.equal}/{r.total}", str(r.excluded),
                       str(r.past_end)) for r in rows]
    widths = [max(len(t[i]) for t in table) for i in range(len(head))]
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    equal, total = sum(r.equal for r in rows), sum(r.total for r in rows)
    print(f"total: {equal}/{total} lines equal, {sum(r.excluded for r in rows)} threads "
          f"excluded (frame #0 differs between runs), {sum(r.past_end for r in rows)} frames "
          "past the end")
    for r in rows:
        if r.problem:
            print(f"FAIL {r.arch} {r.program} {r.variant}: {r.problem}")


def main():
    args = sys.argv[1:]
    mode = "off" if "--side-files-off" in args else "later" if "--side-files-later" in args \
        else "on"
    only = [a for a in args if not a.startswith("--")]
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    rows, errors = [], 0
    with side_file_cache("uk-gdb-same-bt-") as work:  # holds the cache
        # The same environment for every run: live programs get GDB's environment, and a
        # different one would move their stacks.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work,
               "UNWINDKIT_CACHE_DIR": os.path.join(work, "cache")}
        for arch in (truth.X86_64, truth.AARCH64):
            for case in truth.cases_for(arch.name):
                if only and case.name not in only:
                    continue
                reason = dict(case.no_truth).get(arch.name)
                try:
                    if reason:
                        raise truth.Skip(reason)
                    rows += check_program(arch, case, work, src, env, mode)
                except truth.Skip as skip:
                    print(f"SKIP {arch.name} {case.name}: {skip}")
                except Exception as e:  # noqa: BLE001 - one broken case must not hide others
                    print(f"ERROR {arch.name} {case.name}: {e}")
                    errors += 1
    print_table(rows)
    bad = [r for r in rows if r.problem or r.past_end or r.equal != r.total]
    return 1 if bad or errors or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
