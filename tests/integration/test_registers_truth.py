#!/usr/bin/env python3
"""Debugger register truth test (issue 22): with the plugin, every callee-saved register GDB or
LLDB shows in a caller frame must be the truth's value or be shown unavailable, never wrong.

Every program in tests/programs/ (truth/cases.py) and the shared fixtures, built intact and
stripped (truth/build.py), is opened in each debugger twice: the stripped copy with the plugin,
the intact copy without it (the truth). Runs:
- GDB, x86_64: the stripped copy (its own .sframe, v1 from gas; row `gdb`) and its v2 /
  v2-pcrel / v3 twins (truth/twins.py, on the stripped copy's core; rows `gdb twin-...`), the
  shared-library case among them;
- gdb-multiarch, AArch64 (static, crashed under qemu-aarch64);
- GDB again on the stripped copy as in the first session of a module too large to wait for
  (row `gdb later` / `gdb-multiarch later`: `unwindkit set side-file-wait-limit 0`, an empty
  side-file cache), whose frames the Python unwinder does;
- LLDB, x86_64 and AArch64, and again as in the first session of a module too large to wait
  for (row `lldb ARCH quick`: `unwindkit set side-file-wait-limit 0`, an empty side-file
  cache), which gets the quick side file: no prologue analysis, so callee-saved registers may
  be shown unavailable (that row has no bound on them, but must show some: else the quick
  file was not what LLDB read), never wrong; and again with `unwindkit disable` before the
  target and `unwindkit enable` after a `bt all` (row `lldb ARCH re-enabled`), and with no
  in-process server (row `lldb ARCH no server`: TMPDIR names no folder; the plugin gives LLDB
  each side file as it makes the module again);
- lldb-dap, an editor's Registers view of every frame (rows `lldb-dap ARCH` and `lldb-dap
  ARCH quick`, the plugin in `initCommands`), against lldb-dap alone on the intact copy; it
  lists inlined calls as frames too, on both sides. LLDB pairs an executable with a core by
  build-id, so where the twins share one (x86_64 without our own shared libraries: strip keeps the note) the truth
  reads the stripped copy's core with the intact executable: the same state, even for a
  thread that spins. GDB does not place an executable that is not the core's own file (its
  backtrace goes wrong), so GDB's truth reads the intact copy's core.
In each, every frame >= 1 whose PC is the truth's at the same activation record is compared:
x86_64 rbx, rbp, r12-r15, rsp, rip; AArch64 x19-x29, sp, pc, d8-d15 (where the truth shows
them: qemu's cores hold no FP registers), and the arguments of frames with debug info (libc's
__libc_start_main_impl: libc6-dbg). A thread whose frame #0 differs between the two runs has
no truth (two cores of a spinning thread) and is listed, not compared.

Passes when no value is wrong and, per debugger, the unavailable values are at most 5 % of the
values the truth shows. Prints per program and per debugger: values compared, equal,
unavailable, wrong (and the first wrong ones), frames lined up, and the arguments likewise."""
import dataclasses
import os
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from truth.frame_values import (  # noqa: E402
    REGISTERS, Tally, compare, dap_shown, dap_values, gdb_values, lldb_values)
from truth.tools import Skip, lldb, need, run, side_file_cache  # noqa: E402
from truth.twins import make_twins  # noqa: E402
from dap_client import core_registers  # noqa: E402
from lldb_plugin import Lldb, plugin_path  # noqa: E402

MAX_UNAVAILABLE = 0.05  # of the values the truth shows, per debugger (but QUICK rows)
QUICK = " quick"  # rows of LLDB's quick side file: no analysis, unavailable values expected
SHOW_WRONG = 5  # wrong values printed per row


@dataclasses.dataclass
class Row:
    program: str
    debugger: str
    tally: Tally = None
    status: str = "ok"  # ok | skip | error
    detail: str = ""


def gdb_plugin():
    path = os.path.join(os.environ["UNWINDKIT_BUILD_DIR"], "gdb-plugin", "unwindkit-gdb.py")
    if not os.path.isfile(path):
        raise Skip(f"the GDB plugin is not built: {path} is missing")
    return path


def build_id(path):
    p = run([need("readelf"), "-n", path], check=False)
    return next((line.split(":", 1)[1].strip() for line in p.stdout.splitlines()
                 if "Build ID:" in line), None)


def gdb_rows(pair, intact_core, stripped_core, twins):
    """GDB on the stripped copy (and on each twin) against GDB on the intact copy."""
    arch, regs = pair.arch, REGISTERS[pair.arch.name]
    search = lambda b: [f"set solib-search-path {':'.join(b.search_dirs)}"] \
        if b.search_dirs else []  # noqa: E731
    truth_values = gdb_values(arch.gdb, pair.intact.exe, intact_core, regs,
                              settings=search(pair.intact))
    plugin = gdb_plugin()
    runs = [(arch.gdb, pair.stripped, ())]  # the stripped copy's own .sframe (gas: v1)
    for twin in twins:
        sysroot = dict(zip(twin.bt_args[::2], twin.bt_args[1::2])).get("--sysroot")
        runs.append((f"{arch.gdb} twin-{twin.label}", twin.build,
                     (f"set sysroot {sysroot}",) if sysroot else ()))
    rows = []
    for label, build, settings in runs:
        ours = gdb_values(arch.gdb, build.exe, stripped_core, regs, plugin,
                          settings=(*settings, *search(build)))
        rows.append(Row(pair.name, label, compare(truth_values, ours, regs)))
    # The first session of a module too large to wait for: the Python unwinder's registers
    # (an empty side-file cache, the plugin set before the files load).
    with side_file_cache("uk-regs-later-") as cache:
        later = (f"source {plugin}", "unwindkit set side-file-wait-limit 0")
        ours = gdb_values(arch.gdb, pair.stripped.exe, stripped_core, regs,
                          settings=(*later, *search(pair.stripped)),
                          env=dict(os.environ, UNWINDKIT_CACHE_DIR=cache))
        rows.append(Row(pair.name, f"{arch.gdb} later", compare(truth_values, ours, regs)))
    return rows


LLDB_SIDE_FILES = (("", ()), (QUICK, ("unwindkit set side-file-wait-limit 0",)))
# The prompt's runs: (label, commands after the plugin loads, commands once the target is
# made, variables set for LLDB). Also: disabled before the target is made and enabled after
# LLDB's own `bt all` (the modules LLDB made without side files are made again), and with no
# in-process server (TMPDIR names no folder: each module is given its file as it is made again).
LLDB_RUNS = (*((label, setup, (), None) for label, setup in LLDB_SIDE_FILES),
             (" re-enabled", ("unwindkit disable",), ("bt all", "unwindkit enable"), None),
             (" no server", (), (), {"TMPDIR": "/nonexistent"}))


def lldb_truth_core(pair, intact_core, stripped_core):
    """The core LLDB's truth (the intact copy) reads, and the row's note: the stripped copy's
    core where the two copies share a build-id (LLDB pairs them), else the intact copy's own."""
    ids = build_id(pair.intact.exe), build_id(pair.stripped.exe)
    if not pair.intact.libs and ids[0] is not None and ids[0] == ids[1]:
        return stripped_core, ""
    return intact_core, "truth on the intact copy's own core"


def lldb_rows(pair, intact_core, stripped_core):
    """LLDB with the plugin on the stripped copy against LLDB alone on the intact copy: with
    the analyzed side file, the quick one, after `unwindkit enable`, and with no server."""
    regs = REGISTERS[pair.arch.name]
    truth_core, detail = lldb_truth_core(pair, intact_core, stripped_core)
    truth_values = lldb_values(Lldb(plugin=False), pair.intact.exe, truth_core, regs)
    rows = []
    for label, setup, after, env in LLDB_RUNS:
        ours = lldb_values(Lldb(plugin=True, setup=setup, after_target=after, env=env),
                           pair.stripped.exe, stripped_core, regs)
        rows.append(Row(pair.name, f"lldb {pair.arch.name}{label}",
                        compare(truth_values, ours, regs), detail=detail))
    return rows


def dap_rows(pair, intact_core, stripped_core):
    """An editor's Registers view: lldb-dap with the plugin in `initCommands` on the stripped
    copy against lldb-dap alone on the intact copy, with either side file."""
    regs = REGISTERS[pair.arch.name]
    adapter = lldb("lldb-dap")
    truth_core, detail = lldb_truth_core(pair, intact_core, stripped_core)
    truth_values = dap_values(core_registers(adapter, pair.intact.exe, truth_core, dap_shown),
                              regs)
    rows = []
    for label, setup in LLDB_SIDE_FILES:
        with side_file_cache("uk-regs-dap-") as cache:
            ours = core_registers(adapter, pair.stripped.exe, stripped_core, dap_shown,
                                  init_commands=(f"plugin load {plugin_path()}", *setup),
                                  env=dict(os.environ, UNWINDKIT_CACHE_DIR=cache))
        rows.append(Row(pair.name, f"lldb-dap {pair.arch.name}{label}",
                        compare(truth_values, dap_values(ours, regs), regs), detail=detail))
    return rows


def run_pair(pair, intact_core, stripped_core, with_twins):
    rows = []
    for label, make in (("gdb", lambda: gdb_rows(pair, intact_core, stripped_core,
                                                 make_twins(pair.stripped) if with_twins
                                                 else [])),
                        ("lldb", lambda: lldb_rows(pair, intact_core, stripped_core)),
                        ("lldb-dap", lambda: dap_rows(pair, intact_core, stripped_core))):
        try:
            rows += make()
        except Skip as e:
            rows.append(Row(pair.name, label, status="skip", detail=str(e)))
        except Exception as e:  # noqa: BLE001 - one broken run must not hide the others
            traceback.print_exc()
            rows.append(Row(pair.name, label, status="error", detail=str(e)))
    return rows


def all_rows(only):
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    shared = os.environ.get("UNWINDKIT_SHARED_DIR")
    rows = []
    with tempfile.TemporaryDirectory(prefix="uk-registers-truth-") as work:
        for arch in (truth.X86_64, truth.AARCH64):
            for case in truth.cases_for(arch.name):
                if only and case.name not in only:
                    continue
                name = f"{arch.name} {case.name}"
                try:
                    reason = dict(case.no_truth).get(arch.name)
                    if reason:
                        raise Skip(reason)
                    pair = truth.build_pair(case, arch, work, src)
                    pair.name = name
                    cores = truth.make_core(pair.intact, arch), truth.make_core(pair.stripped,
                                                                                arch)
                except Skip as e:
                    rows.append(Row(name, "-", status="skip", detail=str(e)))
                    continue
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    rows.append(Row(name, "-", status="error", detail=str(e)))
                    continue
                rows += run_pair(pair, *cores, with_twins=arch is truth.X86_64)
            if shared and not only:
                # Given cores; no twins (they would be written into the shared folder).
                pair = truth.fixture_pair(shared, arch)
                rows += run_pair(pair, os.path.join(pair.intact.dir, "core.prog"),
                                 os.path.join(pair.stripped.dir, "core.prog"), with_twins=False)
    return rows


def _share(part, whole):
    return f"{100 * part / whole:.1f}%" if whole else "-"


def print_rows(rows):
    head = ("program", "debugger", "frames", "values", "equal", "unavail", "unavail%", "wrong",
            "args", "args-eq", "args-unav", "args-wrong", "untrusted-threads")
    table = [head]
    for r in rows:
        t = r.tally
        if t is None:
            table.append((r.program, r.debugger, *["-"] * 10, r.status))
            continue
        table.append((r.program, r.debugger, f"{t.aligned}/{t.frames}", str(t.values),
                      str(t.equal), str(t.unavailable), _share(t.unavailable, t.values),
                      str(t.wrong), str(t.args), str(t.args_equal), str(t.args_unavailable),
                      str(t.args_wrong), str(len(t.untrusted)) if t.untrusted else "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    print("(frames: truth frames >= 1 whose PC the plugin's run has at the same activation "
          "record / truth frames >= 1 printed; values: callee-saved registers the truth shows "
          "in those frames; args: arguments of frames with debug info)")
    for r in rows:
        if r.detail:
            print(f"{r.program} [{r.debugger}] {'note' if r.status == 'ok' else r.status}: "
                  f"{r.detail}")
        if r.tally and r.tally.untrusted:
            print(f"{r.program} [{r.debugger}] threads whose frame #0 differs between the runs "
                  f"(not compared): {'; '.join(r.tally.untrusted)}")
        if r.tally and r.tally.lengths:
            print(f"{r.program} [{r.debugger}] threads whose stack has another length with the "
                  f"plugin: {'; '.join(r.tally.lengths)}")
        if r.tally and r.tally.problems:
            shown = r.tally.problems[:SHOW_WRONG]
            more = len(r.tally.problems) - len(shown)
            print(f"{r.program} [{r.debugger}] wrong:\n    " + "\n    ".join(shown) +
                  (f"\n    ... and {more} more" if more else ""))


def verdict(rows):
    """Per-debugger totals and the failures, as text lines (empty: pass)."""
    totals = {}
    for r in rows:
        if r.tally is not None:
            totals.setdefault(r.debugger, Tally()).add(r.tally)
    failures = [f"{r.program} [{r.debugger}]: {r.detail}" for r in rows if r.status == "error"]
    print("\nper debugger: values compared, equal, unavailable (share), wrong; arguments "
          "compared, equal, unavailable, wrong")
    for name, t in totals.items():
        print(f"  {name}: {t.values} values, {t.equal} equal, {t.unavailable} unavailable "
              f"({_share(t.unavailable, t.values)}), {t.wrong} wrong; {t.args} arguments, "
              f"{t.args_equal} equal, {t.args_unavailable} unavailable, {t.args_wrong} wrong; "
              f"frames lined up {t.aligned}/{t.frames}")
        if t.wrong or t.args_wrong:
            failures.append(f"{name}: {t.wrong} wrong register values, {t.args_wrong} wrong "
                            f"arguments")
        if t.values == 0:
            failures.append(f"{name}: no value compared: the check saw nothing")
        elif name.endswith(QUICK) and t.unavailable == 0:
            failures.append(f"{name}: no value unavailable: the quick side file was not used")
        elif t.unavailable > MAX_UNAVAILABLE * t.values and not name.endswith(QUICK):
            failures.append(f"{name}: {t.unavailable} of {t.values} values unavailable "
                            f"({_share(t.unavailable, t.values)} > {MAX_UNAVAILABLE:.0%})")
    if not totals and not all(r.status == "skip" for r in rows):
        failures.append("no debugger run compared anything")
    return failures


def main():
    only = sys.argv[1:]  # optional case names, for running one case by hand
    rows = all_rows(only)
    print_rows(rows)
    failures = verdict(rows)
    if rows and all(r.status == "skip" for r in rows):
        print("SKIP: no run could be made (see the reasons above)")
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
