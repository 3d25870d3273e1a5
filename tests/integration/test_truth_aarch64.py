#!/usr/bin/env python3
"""Truth test, AArch64 (static, under qemu-aarch64): every program in tests/programs/ is built intact and stripped (SFrame
kept), crashed to cores at the same addresses, and `unwindkit bt` on the stripped core must
give GDB's frames on the intact core, PC for PC, in every thread. Also runs the shared fixture
sframe-v2-aarch64. Prints truth / ours / gdb-alone / lldb-alone per program."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    only = sys.argv[1:]  # optional case names, for running one case by hand
    cases = [c for c in truth.cases_for("aarch64") if not only or c.name in only]
    outcomes = truth.run_cases(truth.AARCH64, cases, src,
                               None if only else os.environ.get("UNWINDKIT_SHARED_DIR"))
    truth.print_table(outcomes)
    bad = [o for o in outcomes if o.status in ("differ", "error")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
