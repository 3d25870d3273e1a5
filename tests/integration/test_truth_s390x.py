#!/usr/bin/env python3
"""Truth test, s390x (static, under qemu-s390x; issue #52): the s390x truth cases
(truth/cases.py, tests/programs/s390x_*.c) built by the s390x cross gcc with gas's SFrame v3
(binutils 2.46 or later), each in the three copies of truth/build.py, crashed to cores under
qemu-s390x, whose cores hold NT_PRSTATUS, NT_PRPSINFO and NT_AUXV (no NT_FILE, no FPRs, no
vdso pages). Three checks:
  - `unwindkit bt` on the stripped copy's core (symbols and the program's .eh_frame gone,
    .sframe kept) gives GDB's frames on the intact copy's core, PC for PC (truth.run_cases);
  - gdb-multiarch with the plugin on the stripped copy prints, line for line, the
    `thread apply all bt` of gdb-multiarch alone on the copy that kept .eh_frame, on the core
    and live under qemu-s390x's GDB stub (test_gdb_same_bt.check_program), with the side file
    and as in a first session that does not wait for it (the Python unwinder's frames);
  - `unwindkit sframe lookup` at every row of every flexible FDE of the stripped program gives
    the CFA its readelf --sframe shows (test_sframe_corpus.check_lookups).
Skipped (exit 77) without the s390x cross gcc, a binutils 2.46 readelf for s390x, qemu-s390x
or gdb-multiarch. With the GDB plugin unbuilt (the sanitizer build) the GDB rows are left
out and said so."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from test_gdb_same_bt import check_program, print_table  # noqa: E402
from test_sframe_corpus import ARCHES, binutils_version, check_lookups, flexible_rows  # noqa: E402
from truth.tools import need, run, side_file_cache  # noqa: E402

ARCH = truth.S390X
READELF = ARCHES[ARCH.name][1]
# The first binutils whose gas writes SFrame for s390x as v3 does (flexible FDEs).
MIN_BINUTILS = (2, 46)
# Cases not run as a first session that does not wait for its side file, and why.
NOT_LATER = {"s390x_fpr_caller": (
    "on its qemu core (no FPRs) both stacks stop after frame #1, but GDB words it otherwise "
    "when the plugin's Python unwinder declines the frame it cannot step ('frame did not save "
    "the PC') than its DWARF unwinder on the .eh_frame copy ('not enough registers or memory "
    "available'); live, where f0 is read, it gave the oracle's 8/8 lines")}


def tools_here():
    for tool in (ARCH.cc, READELF, ARCH.runner[0], ARCH.gdb):
        need(tool)
    if binutils_version(need(READELF)) < MIN_BINUTILS:
        raise truth.Skip(f"{READELF} is older than binutils {'.'.join(map(str, MIN_BINUTILS))}")


def lookups(pairs):
    """(problems, rows looked up) of `sframe lookup` at each flexible row of each stripped
    program against its readelf."""
    problems, looked_up = [], 0
    for pair in pairs:
        text = run([need(READELF), "--sframe", pair.stripped.exe]).stdout
        found, n = check_lookups(ARCH.name, pair.stripped.exe, text)
        problems += found
        looked_up += n
        print(f"{pair.name}: {n} flexible rows of {len(flexible_rows(text))} looked up, "
              f"{len(found)} differ from readelf")
    return problems, looked_up


def main():
    tools_here()
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    only = sys.argv[1:]
    cases = [c for c in truth.cases_for(ARCH.name) if not only or c.name in only]
    if not cases:
        raise truth.Skip("no s390x truth case")
    problems = []

    # No SFrame twins: flexible FDEs have no v2 form (`sframe convert` refuses them). qemu-s390x
    # puts the stack of the stripped copy elsewhere (its data segment starts a page lower):
    # frame #0's PC must agree, its SP cannot.
    outcomes = truth.run_cases(ARCH, cases, src, twins=False, same_sp=False)
    print("== unwindkit bt on the stripped core vs gdb-multiarch on the intact core")
    truth.print_table(outcomes)
    problems += [f"bt {o.name}: {o.status}: {o.detail}" for o in outcomes
                 if o.status in ("differ", "error", "skip")]

    plugin = os.path.join(os.environ["UNWINDKIT_BUILD_DIR"], "gdb-plugin", "unwindkit-gdb.py")
    rows, pairs = [], []
    with side_file_cache("uk-truth-s390x-") as work:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work,
               "UNWINDKIT_CACHE_DIR": os.path.join(work, "cache")}
        for case in cases:
            pairs.append(truth.build_pair(case, ARCH, os.path.join(work, "lookups"), src))
            if not os.path.isfile(plugin):
                continue
            # "later": the first session of a module too large to wait for, whose frames the
            # plugin's Python unwinder does (test_gdb_same_bt --side-files-later).
            for mode in ("on", "later"):
                if mode == "later" and case.name in NOT_LATER:
                    print(f"SKIP {case.name} (later): {NOT_LATER[case.name]}")
                    continue
                try:
                    found = check_program(ARCH, case, work, src, env, mode)
                except Exception as e:  # noqa: BLE001 - one broken case must not hide others
                    problems.append(f"gdb {case.name} ({mode}): {e}")
                    continue
                for r in found:
                    r.variant += "" if mode == "on" else f" ({mode})"
                rows += found
        found, looked_up = lookups(pairs)
    problems += found
    if os.path.isfile(plugin):
        print("== gdb-multiarch + plugin on the stripped copy vs gdb-multiarch on the "
              ".eh_frame copy (thread apply all bt)")
        print_table(rows)
        problems += [f"gdb {r.program} {r.variant}: {r.problem or 'lines differ'}"
                     for r in rows if r.problem or r.past_end or r.equal != r.total]
        if not rows:
            problems.append("no GDB row was compared")
    else:
        print(f"NOTE: {plugin} is not built here: GDB's rows not compared")
    print(f"s390x flexible rows looked up: {looked_up}")
    if looked_up == 0:
        problems.append("no flexible row was looked up: the program lacks what it is for")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    truth.tools.exit_with(main)
