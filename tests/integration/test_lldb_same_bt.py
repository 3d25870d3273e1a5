#!/usr/bin/env python3
"""Part 1, the prompt. LLDB's `bt all` with the plugin equals, line for line, LLDB alone with
the `.eh_frame` copy as the executable on the same core (lldb_same_bt.py): every truth
program, x86_64 (the stripped copy = SFrame v1, its v2 / v2-pcrel / v3 twins, the
shared-library case) and AArch64 (qemu cores), and on x86_64 also live (the program run to
its crash by LLDB, against the `.eh_frame` copy run the same way; threads whose frame #0
differs between the two runs are left out, and the test says how many). The plugin is
loaded before the target exists, as `~/.lldbinit` or lldb-dap's `initCommands` load it: the
modules get their side files from the plugin's in-process debuginfod server as they load
(and once more as in the first session of a module too large to wait for, "quick": its side
file without prologue analysis, `unwindkit set side-file-wait-limit 0`, where an argument
value the oracle shows may be shown `<unavailable>`, nothing else may differ). Frames past
the oracle's last one are counted: 0 expected. Prints a table per program.

Part 2, every client (the stripped copy of each program): a real lldb-dap-22 (attach with
`coreFile`, the plugin in `initCommands` = before the target exists, or in `postRunCommands`
= after; threads, stackTrace of every thread, scopes and variables of libc's
`__libc_start_call_main` frame where there is one) and a Python script using only the SB API
(sb_frames.py: CreateTarget, LoadCore, GetFrameAtIndex; `plugin load` before the target or
after the core). Against the same client on the `.eh_frame` copy, with the plugin loaded
before the target or after it, every frame's pc and name are equal, and with it loaded before,
those variables too; lldb-dap also as in the first session of a module too large to wait for
("quick", the plugin and `unwindkit set side-file-wait-limit 0` in `initCommands`): every pc
and name. No frame past the end in any. Part 1 also runs the prompt with the
plugin loaded after the core (the stripped copy's own core: "v1 after" / "stripped after"),
with `unwindkit disable` before the target and `unwindkit enable` after a `bt all` ("v1
re-enabled" / "stripped re-enabled"), and with no in-process server (TMPDIR names no folder: "v1
no server" / "stripped no server")."""
import dataclasses
import functools
import os
import re
import subprocess
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from lldb_same_bt import (  # noqa: E402
    bt_all, first_difference, normalize, past_end, same_frame0_threads,
    thread_frames)
from dap_client import core_session  # noqa: E402
from lldb_plugin import plugin_path  # noqa: E402
from truth.tools import lldb, need, python, run, side_file_cache  # noqa: E402
from truth.twins import make_twins  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LIBC_FRAME = "__libc_start_call_main"  # a libc frame with arguments (and main's name in one)
QUICK_SETUP = "unwindkit set side-file-wait-limit 0"  # every module gets its quick side file
REENABLE = ("bt all", "unwindkit enable")  # after the target, made with the plugin disabled
NO_SERVER = {"TMPDIR": "/nonexistent"}  # the plugin's server has no folder: it does not start
LLDB_MAJOR = int(os.environ.get("UNWINDKIT_LLDB_VERSION", "22"))
# What an older LLDB cannot do, as the plugin says when it loads (lldb-plugin/src/lldb_compat.h):
PROGRESS_SINCE = 20  # SBProgress: the side file being made is reported
NUMBERED_BEFORE = 20  # LLDB 19 names a function known only from CFI `___lldb_unnamed_symbol<N>`
OBJECT_MAP_SINCE = 20  # target.object-map (the harness's, for the shared-library case)
# LLDB 19 never drops the unwind plans it made from a module's own `.eh_frame` (a symbol file
# added later leaves them), and cannot make the module again while a command holds a frame of it.
OWN_PLANS_KEPT_BEFORE = 20
UNNAMED_NUMBER = re.compile(r"(___lldb_unnamed_symbol)(\d+)")


def variants(pair):
    """(label, executable, object-map pairs) for the plugin runs on the stripped core."""
    out = [("v1" if pair.arch.name == "x86_64" else "stripped", pair.stripped.exe, ())]
    if pair.arch.name != "x86_64":
        return out
    for twin in make_twins(pair.stripped):
        # The twin's libraries sit under its sysroot at the path the core names.
        sysroot = os.path.join(twin.build.dir, "sysroot")
        maps = ((pair.stripped.dir, sysroot + pair.stripped.dir),) if pair.stripped.libs else ()
        out.append((twin.label, twin.build.exe, maps))
    return out


def own_plans_kept(pair):
    """Why, on this LLDB, the plugin coming after LLDB unwound the stripped copy (loaded after
    the target, enabled again, or with no server to hand the side file over as the module is
    made) cannot match: the stripped copy keeps an `.eh_frame` of its own (a static link's
    libc), from which LLDB 19 made the plans it keeps. None where it can."""
    if LLDB_MAJOR >= OWN_PLANS_KEPT_BEFORE:
        return None
    if ".eh_frame" not in run([need("readelf"), "-SW", pair.stripped.exe]).stdout:
        return None
    return (f"LLDB {LLDB_MAJOR} keeps the unwind plans it made from the stripped copy's own "
            ".eh_frame before the plugin came (README: what LLDB 19 goes without)")


def numbers_comparable(pair):
    """Whether LLDB 19's numbered names of the stripped copy can equal the twin's: LLDB 19
    numbers the functions of `.eh_frame` in address order, so where the twin's `.eh_frame`
    has functions the stripped copy's SFrame lacks (a static link's libc, built without
    SFrame), every number after one of them differs, and nothing in the stripped file tells
    how many there were. Newer LLDBs name such a function by its address."""
    return LLDB_MAJOR >= NUMBERED_BEFORE or same_functions(pair.eh_frame.exe, pair.stripped.exe)


@functools.lru_cache(maxsize=None)
def same_functions(twin, stripped):
    """Whether the twin's `.eh_frame` has no more functions than `stripped`'s SFrame and the
    entry point's rule state."""
    readelf = need("readelf")
    eh = run([readelf, "--debug-dump=frames", twin]).stdout
    sf = run([readelf, "--sframe", stripped]).stdout
    twin_fdes = len(re.findall(r"^\s*\S+ \S+ \S+ FDE cie=", eh, re.M))
    sframe_fdes = sum(int(n) for n in re.findall(r"Num FDEs:\s*(\d+)", sf))
    return twin_fdes <= sframe_fdes + 1  # + the entry point's rule


def renumbered(lines):
    """`lines` with LLDB 19's unnamed-symbol numbers replaced by `#`."""
    return [UNNAMED_NUMBER.sub(r"\1#", line) for line in lines]


def check_no_server():
    """The "no server" runs have none: `unwindkit status` says so there, and not otherwise."""
    problems = []
    for env, want in ((NO_SERVER, True), (None, False)):
        with tempfile.TemporaryDirectory(prefix="unwindkit-lldb-cache-") as cache:
            p = subprocess.run([lldb(), "-b", "-x", "-o", f"plugin load {plugin_path()}",
                                "-o", "unwindkit status"], capture_output=True, text=True,
                               timeout=120,
                               env=dict(os.environ, **(env or {}), UNWINDKIT_CACHE_DIR=cache))
        if ("no in-process server" in p.stdout) != want:
            problems.append(f"`unwindkit status` with {env}: {p.stdout.strip()[-300:]!r}")
    return problems


@dataclasses.dataclass
class Run:
    """One LLDB run with the plugin, and the oracle's lines it must equal."""
    label: str
    exe: str
    maps: tuple = ()  # target.object-map pairs
    core: str = None  # None: live
    want: list = None  # the oracle's lines
    after: bool = False  # the plugin loaded after the target
    setup: tuple = ()  # the plugin's commands before the target
    after_target: tuple = ()  # the plugin's commands once the target is made
    env: dict = None  # variables set for LLDB


def check(pair, core, rows):
    oracle = pair.eh_frame
    oracle_maps = ((pair.stripped.dir, oracle.dir),) if oracle.libs else ()
    want_core = bt_all(oracle.exe, core, plugin=False, object_map=oracle_maps)
    if not any(thread_frames(want_core)):
        raise AssertionError(f"{pair.name}: LLDB printed no frames on the oracle copy")
    runs = [Run(label, exe, maps, core=core, want=want_core)
            for label, exe, maps in variants(pair)]
    first = runs[0].label
    stripped = functools.partial(Run, exe=pair.stripped.exe, core=core, want=want_core)
    # The plugin loaded at the prompt once the core is loaded: modules LLDB made before it.
    runs.append(stripped(first + " after", after=True))
    # The first session of a module too large to wait for: its quick side file.
    runs.append(stripped(first + " quick", setup=(QUICK_SETUP,)))
    # Disabled before the target, enabled after a look at LLDB's own `bt all`: the modules LLDB
    # made without side files, and has unwound, are made again.
    runs.append(stripped(first + " re-enabled", setup=("unwindkit disable",),
                         after_target=REENABLE))
    # No in-process server: LLDB is given each side file as the plugin makes the module again.
    runs.append(stripped(first + " no server", env=NO_SERVER))
    if not pair.arch.runner:  # live: LLDB runs the program itself (AArch64 needs qemu)
        want_live = bt_all(oracle.exe, None, plugin=False, object_map=oracle_maps)
        runs.append(Run("live", pair.stripped.exe, core=None, want=want_live))
    problems = []
    exact_numbers = numbers_comparable(pair)
    if not exact_numbers:
        print(f"     {pair.arch.name} {pair.name}: the twin's .eh_frame has functions SFrame "
              "lacks: LLDB 19's unnamed-symbol numbers are compared as `#`")
    kept = own_plans_kept(pair)
    for run in runs:
        label, exe, run_core, want = run.label, run.exe, run.core, run.want
        got = bt_all(exe, run_core, plugin=True, object_map=run.maps,
                     plugin_after_target=run.after, setup=run.setup,
                     after_target=run.after_target, env=run.env)
        if run_core is None:
            want, got, left_out = same_frame0_threads(want, got)
            if left_out:
                print(f"     {pair.arch.name} {pair.name} live: {left_out} threads left out "
                      "(frame #0 differs between the two runs)")
        paths = [oracle.exe, exe]
        w, g = normalize(want, paths), normalize(got, paths)
        if not exact_numbers:
            w, g = renumbered(w), renumbered(g)
        want_threads, got_threads = thread_frames(want), thread_frames(got)
        same = sum(1 for a, b in zip(w, g) if a == b)
        extra = past_end(want_threads, got_threads)
        rows.append((pair.arch.name, pair.name, label, len(want_threads),
                     sum(map(len, want_threads)), sum(map(len, got_threads)), same,
                     max(len(w), len(g)), extra))
        diff = first_difference(w, g, unavailable_allowed=QUICK_SETUP in run.setup)
        if diff and kept and (run.after or run.after_target or run.env == NO_SERVER):
            print(f"     known {pair.arch.name} {pair.name} {label}: {same}/{max(len(w), len(g))} "
                  f"lines: {kept}")
        elif diff:
            problems.append(f"{label}: {diff}")
        if extra:
            problems.append(f"{label}: {extra} frames past the end")
    return problems


def sb_frames(exe, core, plugin_when=None, object_map=()):
    """sb_frames.py's lines: THREAD / FRAME pc module`symbol + offset."""
    lldb_python = subprocess.run([lldb(), "-P"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    cmd = [python(), os.path.join(HERE, "sb_frames.py"), exe, core]
    if plugin_when:
        cmd += ["--plugin", plugin_path(), "--when", plugin_when]
    for a, b in object_map:
        cmd += ["--object-map", a, b]
    with side_file_cache("unwindkit-lldb-cache-") as cache:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=600,
                           env=dict(os.environ, PYTHONPATH=lldb_python,
                                    UNWINDKIT_CACHE_DIR=cache))
    if p.returncode != 0:
        raise AssertionError(f"sb_frames.py exit {p.returncode}: {p.stderr[-2000:]}")
    return p.stdout.splitlines()


def sb_threads(lines):
    """[[(pc, "module`symbol + offset"), ...] per thread] from sb_frames.py's lines."""
    threads = []
    for line in lines:
        if line.startswith("THREAD"):
            threads.append([])
        elif line.startswith("FRAME") and threads:
            _, pc, description = line.split(" ", 2)
            threads[-1].append((int(pc, 16), description))
    return threads


def dap(exe, core, init=(), post=()):
    """lldb-dap's [[(pc, name), ...] per thread] and {scope: [(name, value), ...]} of the
    first __libc_start_call_main frame."""
    with side_file_cache("unwindkit-lldb-cache-") as cache:
        session = core_session(lldb("lldb-dap"), exe, core, init, post,
                               env=dict(os.environ, UNWINDKIT_CACHE_DIR=cache),
                               variables_of=lambda f: f.get("name", "").startswith(LIBC_FRAME))
    stacks = [[(int(f["instructionPointerReference"], 16), f.get("name")) for f in frames]
              for frames in session["stacks"]]
    variables = {scope: [(v.get("name"), v.get("value")) for v in vs]
                 for scope, vs in session["variables"].items()}
    return stacks, variables


def compare_frames(client, pair, when, want, got, rows):
    """Adds a table row; returns the problems: every pc and every name must be equal."""
    if not numbers_comparable(pair):
        want = [[(pc, renumbered([name or ""])[0]) for pc, name in t] for t in want]
        got = [[(pc, renumbered([name or ""])[0]) for pc, name in t] for t in got]
    pairs = [(a, b) for w, g in zip(want, got) for a, b in zip(w, g)]
    pcs = sum(a[0] == b[0] for a, b in pairs)
    names = sum(a == b for a, b in pairs)
    extra = past_end(want, got)
    total = sum(map(len, want))
    rows.append((client, pair.arch.name, pair.name, when, total, sum(map(len, got)), pcs, names,
                 extra))
    problems = []
    if [len(t) for t in want] != [len(t) for t in got] or pcs != total:
        problems.append(f"{client}, plugin {when}: pcs differ: " +
                        first_difference([hex(f[0]) for t in want for f in t],
                                         [hex(f[0]) for t in got for f in t]))
    elif names != total:
        problems.append(f"{client}, plugin {when}: names differ: " +
                        first_difference([f[1] for t in want for f in t],
                                         [f[1] for t in got for f in t]))
    if extra:
        problems.append(f"{client}, plugin {when}: {extra} frames past the end")
    return problems


def known(pair, when, problems):
    """`problems`, but for the plugin loaded after the target where own_plans_kept says why
    they are LLDB's: printed, not failed."""
    kept = own_plans_kept(pair) if when == "after" else None
    for p in problems if kept else ():
        print(f"     known {pair.arch.name} {pair.name} {p.splitlines()[0]} ({kept})")
    return [] if kept else problems


def check_clients(pair, core, rows):
    """Part 2 on the stripped copy: lldb-dap and the SB API, plugin before and after."""
    oracle = pair.eh_frame
    maps = ((pair.stripped.dir, oracle.dir),) if oracle.libs else ()
    map_commands = [f"settings set target.object-map {a} {b}" for a, b in maps]
    load = f"plugin load {plugin_path()}"
    problems = []
    oracle_lines = sb_frames(oracle.exe, core, object_map=maps)
    want_sb = sb_threads(oracle_lines)
    want_dap, want_vars = dap(oracle.exe, core, init=map_commands)
    # The side file a module's first session makes is reported as LLDB's own work is, to the
    # debugger's progress listeners (the prompt's status line, lldb-dap's client).
    making = f"PROGRESS unwindkit: making unwind info: {os.path.basename(pair.stripped.exe)}"
    if any("unwindkit" in line for line in oracle_lines if line.startswith("PROGRESS")):
        problems.append("sb-api, no plugin: unwindkit progress reported")
    for when in ("before", "after"):
        lines = sb_frames(pair.stripped.exe, core, plugin_when=when)
        got = sb_threads(lines)
        problems += known(pair, when, compare_frames("sb-api", pair, when, want_sb, got, rows))
        if when == "before" and LLDB_MAJOR >= PROGRESS_SINCE and making not in lines:
            problems.append(f"sb-api, plugin {when}: no progress '{making}' while the side "
                            f"file was made (saw {[l for l in lines if 'unwindkit' in l]})")
        got_dap, got_vars = dap(pair.stripped.exe, core, init=[load] if when == "before" else (),
                                post=[load] if when == "after" else ())
        problems += known(pair, when,
                          compare_frames("lldb-dap", pair, when, want_dap, got_dap, rows))
        if when == "before" and got_vars != want_vars:
            problems.append(f"lldb-dap, plugin {when}: {LIBC_FRAME} variables {got_vars}, "
                            f"want {want_vars}")
    # The first session of a module too large to wait for, in the editor: its quick side file
    # (test_registers_truth's `lldb-dap ARCH quick` rows show that it is the one read).
    got_dap, _ = dap(pair.stripped.exe, core, init=[load, QUICK_SETUP])
    problems += compare_frames("lldb-dap", pair, "quick", want_dap, got_dap, rows)
    return problems


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    only = sys.argv[1:]
    failures, rows, client_rows = [], [], []
    with tempfile.TemporaryDirectory(prefix="unwindkit-lldb-same-bt-") as work:
        for arch in (truth.X86_64, truth.AARCH64):
            for case in truth.cases_for(arch.name):
                if only and case.name not in only:
                    continue
                name = f"{arch.name} {case.name}"
                if dict(case.no_truth).get(arch.name):
                    print(f"SKIP {name}: {dict(case.no_truth)[arch.name]}")
                    continue
                try:
                    pair = truth.build_pair(case, arch, work, src)
                    if pair.stripped.libs and LLDB_MAJOR < OBJECT_MAP_SINCE:
                        raise truth.Skip(f"LLDB {LLDB_MAJOR} has no target.object-map, which "
                                         "pairs each copy with its own libraries")
                    core = truth.make_core(pair.stripped, arch)
                    problems = check(pair, core, rows) + check_clients(pair, core, client_rows)
                except truth.Skip as e:
                    print(f"SKIP {name}: {e}")
                    continue
                except Exception as e:  # noqa: BLE001 - report every case
                    traceback.print_exc()
                    problems = [f"error: {e}"]
                print(f"{'ok  ' if not problems else 'FAIL'} {name}" +
                      "".join(f"\n     {p}" for p in problems), flush=True)
                if problems:
                    failures.append(name)
    server_problems = check_no_server()
    print(f"{'ok  ' if not server_problems else 'FAIL'} no server" +
          "".join(f"\n     {p}" for p in server_problems), flush=True)
    if server_problems:
        failures.append("no server")
    print(f"\n{'arch':8} {'program':16} {'copy':19} {'threads':>7} {'frames':>7} "
          f"{'ours':>6} {'lines equal':>13} {'past end':>8}")
    for arch, prog, label, nthreads, frames, ours, same, total, extra in rows:
        print(f"{arch:8} {prog:16} {label:19} {nthreads:7} {frames:7} {ours:6} "
              f"{same:6}/{total:<6} {extra:8}")
    if rows:
        same, total = sum(r[6] for r in rows), sum(r[7] for r in rows)
        print(f"total: {same}/{total} lines equal ({100.0 * same / max(total, 1):.1f} %), "
              f"{sum(r[8] for r in rows)} frames past the end, {len(rows)} runs")
    print(f"\n{'client':8} {'arch':8} {'program':16} {'plugin':6} {'frames':>7} {'ours':>6} "
          f"{'pcs equal':>9} {'names equal':>11} {'past end':>8}")
    for client, arch, prog, when, frames, ours, pcs, names, extra in client_rows:
        print(f"{client:8} {arch:8} {prog:16} {when:6} {frames:7} {ours:6} {pcs:9} {names:11} "
              f"{extra:8}")
    for when, what in (("before", "plugin before the target"),
                       ("after", "plugin after the target"), ("quick", "quick side file")):
        rs = [r for r in client_rows if r[3] == when]
        if rs:
            print(f"clients, {what}: {sum(r[6] for r in rs)}/"
                  f"{sum(r[4] for r in rs)} pcs and {sum(r[7] for r in rs)} names equal, "
                  f"{sum(r[8] for r in rs)} frames past the end, {len(rs)} runs")
    if not rows:
        print("FAIL: every case skipped")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
