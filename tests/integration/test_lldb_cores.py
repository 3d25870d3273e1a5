#!/usr/bin/env python3
"""LLDB plugin on cores, x86_64 and AArch64: every program in tests/programs/ (AArch64 ones
static, crashed under qemu-aarch64) and the shared fixtures sframe-v2-x86_64 and
sframe-v2-aarch64. With the plugin, `bt all` on the stripped twin's core must give the PCs
LLDB gives on the intact twin's core, thread for thread (paired by their PCs: the twins'
threads may be listed in another order); `frame select N` + `register read
rip rsp rbp` (AArch64: `pc sp fp`) must give the intact twin's values in every frame of the crashing thread; LLDB
must never crash. Also: `unwindkit disable` before the target is created leaves LLDB's own
result (LLDB without the plugin), and `unwindkit enable` brings ours back."""
import os
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from lldb_plugin import Lldb, frame_registers, selected_thread, threads  # noqa: E402

MAX_REGISTER_FRAMES = 40  # frames checked per case (all of them when fewer)
REGISTERS = {"x86_64": "rip rsp rbp", "aarch64": "pc sp fp"}


def check_pair(name, pair, intact_core, stripped_core):
    regs = REGISTERS[pair.arch.name]
    native, ours = Lldb(plugin=False), Lldb(plugin=True)
    intact_out = native.run(["bt all"], pair.intact.exe, intact_core)
    want = threads(intact_out)
    got = threads(ours.run(["bt all"], pair.stripped.exe, stripped_core))
    if not want:
        raise AssertionError(f"{name}: LLDB printed no frames for the intact core")
    problems = []
    # The twins are different processes: their threads may be listed in another order, so
    # every intact thread must find a stripped thread with the same PCs (and vice versa).
    unmatched = [tuple(t) for t in got]
    for i, w in enumerate(want):
        if tuple(w) in unmatched:
            unmatched.remove(tuple(w))
            continue
        best = max(unmatched, default=(), key=lambda g: sum(1 for a, b in zip(w, g) if a == b))
        first = next((j for j, (a, b) in enumerate(zip(w, best)) if a != b), min(len(w), len(best)))
        problems.append(f"thread {i + 1}: {len(w)} frames intact, no stripped thread agrees "
                        f"(closest: {len(best)} frames, first difference at #{first})")
    if len(want) != len(got):
        problems.append(f"{len(want)} threads intact, {len(got)} stripped")
    # Registers in the selected (crashing) thread.
    crashing = want[selected_thread(intact_out)]
    frames = list(range(min(len(crashing), MAX_REGISTER_FRAMES)))
    if len(crashing) > MAX_REGISTER_FRAMES:
        frames.append(len(crashing) - 1)
    want_regs = frame_registers(native, pair.intact.exe, intact_core, frames, regs=regs)
    # Frame #0 needs no unwinding: if LLDB alone sees it differently on the two cores, the
    # twins did not crash in the same state (C++ unwinding without .eh_frame terminates
    # earlier) and the intact core is no truth for the stripped one.
    alone0 = frame_registers(native, pair.stripped.exe, stripped_core, [0], regs=regs)
    if alone0.get(0) != want_regs.get(0):
        raise truth.Skip(f"the twins' cores differ at frame #0: {want_regs.get(0)} vs "
                         f"{alone0.get(0)}")
    got_regs = frame_registers(ours, pair.stripped.exe, stripped_core, frames, regs=regs)
    if len(want_regs.get(0, {})) != len(regs.split()):
        problems.append(f"intact frame #0: `register read {regs}` gave {want_regs.get(0)}")
    for n in frames:
        if want_regs.get(n) != got_regs.get(n):
            problems.append(f"frame #{n} registers: intact {want_regs.get(n)} "
                            f"stripped {got_regs.get(n)}")
            break
    return problems


def check_disable_enable(pair, intact_core, stripped_core):
    native = Lldb(plugin=False)
    alone = threads(native.run(["bt all"], pair.stripped.exe, stripped_core))
    want = threads(native.run(["bt all"], pair.intact.exe, intact_core))
    ours = Lldb(plugin=True)
    # Disabled before the target exists: its modules load without side files (the plugin's
    # server answers 404), as they would without the plugin.
    create = f"target create {pair.stripped.exe} --core {stripped_core}"
    out = ours.run(["unwindkit disable", create, "bt all", "script print('@@enable')",
                    "unwindkit enable", "bt all"])
    disabled, enabled = out.split("@@enable", 1)
    problems = []
    if threads(disabled) != alone:
        problems.append("after `unwindkit disable` LLDB does not unwind as it does alone")
    if threads(enabled) != want:
        problems.append("after `unwindkit enable` the backtrace is not the intact twin's")
    if alone == want:
        problems.append("LLDB alone already unwinds this core: the check proves nothing")
    return problems


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    only = sys.argv[1:]
    failures, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="unwindkit-lldb-cores-") as work:
        pairs = []
        shared = os.environ.get("UNWINDKIT_SHARED_DIR")
        for arch in (truth.X86_64, truth.AARCH64):
            for case in truth.cases_for(arch.name):
                if only and case.name not in only:
                    continue
                name = f"{arch.name} {case.name}"
                reason = dict(case.no_truth).get(arch.name)
                if reason:
                    print(f"SKIP {name}: {reason}")
                    continue
                try:
                    pair = truth.build_pair(case, arch, work, src)
                    pairs.append((name, pair, truth.make_core(pair.intact, arch),
                                  truth.make_core(pair.stripped, arch)))
                except truth.Skip as e:
                    print(f"SKIP {name}: {e}")
            if shared and not only:
                pair = truth.fixture_pair(shared, arch)
                pairs.append((pair.name, pair, os.path.join(pair.intact.dir, "core.prog"),
                              os.path.join(pair.stripped.dir, "core.prog")))
        for name, pair, intact_core, stripped_core in pairs:
            try:
                problems = check_pair(name, pair, intact_core, stripped_core)
            except truth.Skip as e:
                print(f"SKIP {name}: {e}")
                continue
            except Exception as e:  # noqa: BLE001 - report every case
                traceback.print_exc()
                problems = [f"error: {e}"]
            ran += 1
            print(f"{'ok  ' if not problems else 'FAIL'} {name}" +
                  "".join(f"\n     {p}" for p in problems))
            if problems:
                failures.append(name)
        if pairs and not only:
            # The x86_64 fixture: LLDB alone cannot unwind its stripped core.
            name, pair, intact_core, stripped_core = next(
                (p for p in pairs if p[0] == "fixture sframe-v2-x86_64"), pairs[-1])
            problems = check_disable_enable(pair, intact_core, stripped_core)
            print(f"{'ok  ' if not problems else 'FAIL'} disable/enable on {name}" +
                  "".join(f"\n     {p}" for p in problems))
            if problems:
                failures.append("disable/enable")
    if ran == 0:
        print("SKIP: no case could run")
        return 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
