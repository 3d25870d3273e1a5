"""The test programs (tests/programs/) and how each is built."""
import dataclasses
import os


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    sources: tuple
    cflags: tuple = ("-O2",)
    lib_sources: tuple = ()
    lib_cflags: tuple = ("-O2", "-fomit-frame-pointer")
    archs: tuple = ("x86_64", "aarch64")
    timeout: int = 300  # seconds for each debugger run
    # Architectures where the case cannot give a truth, and why (printed as the skip reason).
    no_truth: tuple = ()
    # Keep .eh_frame in the stripped twin (symbols still go): a program that throws C++
    # exceptions needs it at run time, or libgcc finds no handler and the stripped twin
    # crashes in another state (std::terminate straight from __cxa_throw).
    keep_eh_frame: bool = False
    # The program's own functions (as the truth names them, without arguments). Where the
    # stripped twin keeps .eh_frame, ours runs with SFrame first and each of these frames must
    # come from SFrame, so the case still proves SFrame unwinding, not CFI.
    own_functions: tuple = ()


CASES = [
    Case("opt_mix", ("opt_mix.c",)),
    Case("omit_fp", ("omit_fp.c",), ("-O2", "-fomit-frame-pointer")),
    Case("deep_recursion", ("deep_recursion.c",), ("-O2", "-fomit-frame-pointer")),
    Case("realign", ("realign.c",)),
    Case("plt_libc", ("plt_libc.c",)),
    Case("shared_lib", ("shared_lib.c",), lib_sources=("crashlib.c",)),
    Case("threads", ("threads.c",), ("-O2", "-pthread")),
    Case("cxx_terminate", ("cxx_terminate.cpp",), keep_eh_frame=True,
         own_functions=("Guard::~Guard", "thrower", "catcher", "main")),
    Case("signal_handler", ("signal_handler.c",), no_truth=(
        ("aarch64", "gdb-multiarch 13 never finishes unwinding through qemu's sigreturn "
                    "trampoline (mov x8, #139; svc #0 in the core at 0x5500801000): even "
                    "`bt 20` hangs, so there is no truth for this core"),)),
    Case("signal_entry", ("signal_entry.c",), archs=("x86_64",)),
    Case("s390x_frames", ("s390x_frames.c", "s390x_crash_leaf.c"), archs=("s390x",)),
    Case("s390x_fpr_caller", ("s390x_fpr_caller.c", "s390x_crash_leaf.c"), archs=("s390x",)),
    Case("cold_abort", ("cold_abort.c",)),
]


def cases_for(arch_name):
    """The cases built for `arch_name`; UNWINDKIT_TRUTH_CASES (names, space-separated) keeps
    only those, as the other releases' smoke runs do (scripts/test --smoke)."""
    only = os.environ.get("UNWINDKIT_TRUTH_CASES", "").split()
    return [c for c in CASES if arch_name in c.archs and (not only or c.name in only)]
