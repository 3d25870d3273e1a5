"""Truth harness: builds test programs twice (intact and stripped of .eh_frame and symbols,
.sframe kept), crashes both to cores at the same addresses, and compares backtraces.

Truth is GDB on the intact copy's core; ours is `unwindkit bt --json` on the stripped copy's
core. GDB and LLDB alone on the stripped core are recorded for comparison. The GDB and LLDB
plugin tests reuse the same building blocks.
"""
from .build import Arch, Build, Pair, X86_64, AARCH64, S390X, build_pair, fixture_pair
from .cases import Case, cases_for
from .cores import CoreUnavailable, make_core
from .debuggers import Thread, gdb_truth, gdb_alone, lldb_alone
from .ours import our_bt
from .compare import Outcome, compare, print_table, run_cases
from .tools import Skip, run

__all__ = [
    "Arch", "Build", "Pair", "X86_64", "AARCH64", "S390X", "build_pair", "fixture_pair", "Case",
    "cases_for", "CoreUnavailable", "make_core", "Thread", "gdb_truth", "gdb_alone",
    "lldb_alone", "our_bt", "Outcome", "compare", "print_table", "run_cases", "Skip", "run",
]
