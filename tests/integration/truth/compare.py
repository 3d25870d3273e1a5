"""Comparing backtraces and reporting them as a table."""
import dataclasses
import os
import sys
import tempfile
import traceback

from .build import build_pair, fixture_pair
from .cores import make_core
from .debuggers import gdb_alone, gdb_truth, lldb_alone
from .ours import bt_available, our_bt
from .tools import Skip
from .twins import make_twins


def _by_rank(threads):
    # Twins are separate processes: thread ids differ, creation order does not. Sorting by id
    # pairs the same thread of both runs.
    return sorted(threads, key=lambda t: t.tid)


def agreeing_prefix(truth, other):
    """How many leading frames of `other` have the truth's PC."""
    n = 0
    for a, b in zip(truth.pcs, other.pcs):
        if a != b:
            break
        n += 1
    return n


@dataclasses.dataclass
class Outcome:
    name: str
    status: str  # "agree", "differ", "skip", "error"
    detail: str = ""
    threads: int = 0
    truth: int = 0
    ours: str = "-"
    gdb: str = "-"
    lldb: str = "-"
    twins: str = "-"  # ours on the SFrame v2 / v2-pcrel / v3 twins, like `ours`


def compare(truth, ours):
    """'' if `ours` has every truth frame's PC in every thread, else the first difference."""
    truth, ours = _by_rank(truth), _by_rank(ours)
    if len(truth) != len(ours):
        return f"{len(truth)} threads in the truth, {len(ours)} in ours"
    for t, o in zip(truth, ours):
        n = agreeing_prefix(t, o)
        if n < len(t.pcs):
            got = f"{o.pcs[n]:#x} ({o.names[n]})" if n < len(o.pcs) else \
                f"nothing (stopped: {o.stop or 'no reason given'})"
            return (f"thread {t.tid} (ours {o.tid}) frame #{n}: truth {t.pcs[n]:#x} "
                    f"({t.names[n]}), ours {got}")
    return ""


def _score(truth, other):
    truth, other = _by_rank(truth), _by_rank(other)
    good = sum(agreeing_prefix(t, o) for t, o in zip(truth, other))
    return f"{good}/{sum(len(o.pcs) for o in other)}"


def not_from_sframe(truth, ours, own_functions):
    """'' if every frame the truth names as one of `own_functions` came from SFrame in ours
    (and there is at least one), else what did not."""
    seen, wrong = 0, []
    for t, o in zip(_by_rank(truth), _by_rank(ours)):
        for i, name in enumerate(t.names):
            if name.split("(")[0] not in own_functions:
                continue
            seen += 1
            source = o.sources[i] if i < len(o.sources) else "missing"
            if source != "sframe":
                wrong.append(f"frame #{i} {name}: {source}")
    if not seen:
        return f"no truth frame is named one of {own_functions}: the check saw nothing"
    return "; ".join(f"not from SFrame: {w}" for w in wrong)


def _run_one(pair, intact_core, stripped_core, timeout, check_ours, twins=False,
             own_functions=(), same_sp=True):
    out = Outcome(pair.name, "agree")
    truth = gdb_truth(pair, intact_core, timeout)
    out.threads, out.truth = len(truth), sum(len(t.pcs) for t in truth)
    alone = gdb_alone(pair, stripped_core, timeout)
    out.gdb = _score(truth, alone)
    # Frame #0 needs no unwinding: if its PC or SP differs, the twins did not crash in the
    # same state and the intact core is no truth for the stripped one.
    pairs = list(zip(_by_rank(truth), _by_rank(alone)))
    if len(truth) != len(alone) or any(t.pcs[:1] != a.pcs[:1] or (same_sp and t.sp != a.sp)
                                       for t, a in pairs):
        inner = [(hex(t.pcs[0]), hex(t.sp), hex(a.pcs[0]), hex(a.sp)) for t, a in pairs
                 if t.pcs and a.pcs]
        out.status, out.detail = "error", f"the twins' cores differ at frame #0 (pc, sp): {inner}"
        return out
    out.lldb = _score(truth, lldb_alone(pair, stripped_core, timeout))
    if not check_ours:
        out.status, out.detail = "error", "unwindkit bt is not available: comparison not run"
        return out
    # A stripped twin that keeps .eh_frame: SFrame first, and its frames must be SFrame's.
    bt_args = ("--sources", "sframe,cfi,fp") if own_functions else ()
    ours, warnings = our_bt(pair.stripped, stripped_core, timeout, bt_args)
    out.ours = _score(truth, ours)
    diff = compare(truth, ours) or (own_functions and not_from_sframe(truth, ours, own_functions))
    if diff:
        out.status, out.detail = "differ", diff + (f"; warnings: {warnings}" if warnings else "")
    if twins:
        _run_twins(pair, truth, stripped_core, timeout, out, bt_args)
    return out


def _run_twins(pair, truth, stripped_core, timeout, out, bt_args=()):
    """Ours on each SFrame twin of the stripped build, with the stripped copy's core: each must
    agree with the truth like the stripped copy itself."""
    scores, diffs = [], []
    for twin in make_twins(pair.stripped):
        ours, warnings = our_bt(twin.build, stripped_core, timeout, (*twin.bt_args, *bt_args))
        scores.append(_score(truth, ours))
        diff = compare(truth, ours)
        if diff:
            diffs.append(f"twin {twin.label}: {diff}" +
                         (f"; warnings: {warnings}" if warnings else ""))
    out.twins = " ".join(scores)
    if diffs:
        out.status = "differ"
        out.detail = "; ".join(([out.detail] if out.detail else []) + diffs)


def run_cases(arch, cases, src_dir, shared_dir=None, twins=True, same_sp=True):
    """Builds, crashes and compares every case; the shared fixture too if `shared_dir`; the
    SFrame twins too if `twins` (a v3 section with flexible FDEs, s390x's, has no v2 twin).
    `same_sp`: the twins' frame #0 must have one SP as well as one PC (not under qemu-s390x,
    which puts the stack elsewhere when the program's data segment starts a page lower, as
    the stripped copy's does: its text lost the program's .eh_frame)."""
    check_ours = bt_available()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix=f"unwindkit-truth-{arch.name}-") as work:
        for case in cases:
            try:
                reason = dict(case.no_truth).get(arch.name)
                if reason:
                    raise Skip(reason)
                pair = build_pair(case, arch, work, src_dir)
                outcomes.append(_run_one(pair, make_core(pair.intact, arch),
                                         make_core(pair.stripped, arch), case.timeout,
                                         check_ours, twins=twins,
                                         own_functions=case.own_functions, same_sp=same_sp))
            except Skip as e:
                outcomes.append(Outcome(case.name, "skip", str(e)))
            except Exception as e:  # noqa: BLE001 - one broken case must not hide the others
                traceback.print_exc()
                outcomes.append(Outcome(case.name, "error", str(e)))
        if shared_dir:
            pair = fixture_pair(shared_dir, arch)
            try:
                outcomes.append(_run_one(pair, os.path.join(pair.intact.dir, "core.prog"),
                                         os.path.join(pair.stripped.dir, "core.prog"), 300,
                                         check_ours))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                outcomes.append(Outcome(pair.name, "error", str(e)))
    return outcomes


def print_table(outcomes, file=sys.stdout):
    """program | threads | truth frames | ours, gdb-alone, lldb-alone, ours on the v2 / v2-pcrel
    / v3 twins as agreeing/total."""
    head = ("program", "threads", "truth", "ours", "gdb-alone", "lldb-alone",
            "ours-twins v2 v2-pcrel v3", "result")
    rows = [head] + [(o.name, str(o.threads or "-"), str(o.truth or "-"), o.ours, o.gdb, o.lldb,
                      o.twins, o.status) for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)), file=file)
    print("(ours/gdb-alone/lldb-alone/ours-twins: frames agreeing with the truth from frame #0 / "
          "frames printed; twins: the stripped copy converted by `unwindkit sframe convert`)",
          file=file)
    for o in outcomes:
        if o.detail:
            print(f"{o.name}: {o.status}: {o.detail}", file=file)
