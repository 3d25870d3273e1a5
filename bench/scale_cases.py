#!/usr/bin/env python3
"""Builds the scale benchmarks' programs and cores for scripts/bench, once: kept under
OUT_DIR/x86_64/<case>/ and reused while their sources are unchanged (a stamp file holds the
hash of what made them; delete the folder to remake).

Each case is built as the truth tests build their programs (tests/integration/truth): one
link with SFrame, then the `.eh_frame` twin (`ehfram/`: symbols stripped, .eh_frame kept) and
the SFrame twin (`stripd/`: symbols and .eh_frame stripped, .sframe kept), each crashed to
`core.prog` at the same addresses. The benchmarks compare a debugger on the first with the
same debugger and the plugin on the second.
Usage: scale_cases.py OUT_DIR CASE...   prints "CASE FOLDER" per case
"""
import hashlib
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

import truth  # noqa: E402
from truth.cases import Case  # noqa: E402

STACKS = os.path.join(HERE, "programs", "scale_stacks.c")
GENERATOR = os.path.join(HERE, "gen_asm_functions.py")
MILLION = 1_000_000


def _stacks(name, threads, depth_min, depth_max, libc_every):
    return Case(name, (os.path.basename(STACKS),),
                ("-O2", "-pthread", f"-DTHREADS={threads}", f"-DDEPTH_MIN={depth_min}",
                 f"-DDEPTH_MAX={depth_max}", f"-DLIBC_EVERY={libc_every}"), archs=("x86_64",))


# scale_stacks.c's levels are two frames each.
CASES = {
    "deep": _stacks("deep", 1, 1500, 1500, 0),  # a 3,000-frame recursion
    "threads3": _stacks("threads3", 3, 8, 8, 8),  # 3 threads of about 24 frames
    "threads1000": _stacks("threads1000", 1000, 9, 18, 8),  # 1,000 threads, 20-40 frames
    "million": None,  # _million_pair
}


def _million_pair(out_dir):
    """The 1 M-function program's twins, laid out as truth.build_pair lays them out. Not
    build_pair itself: gas takes minutes on a busy machine, past its compile time limit."""
    base = os.path.join(out_dir, "x86_64", "million")
    src = os.path.join(out_dir, "million-src")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(src, exist_ok=True)
    truth.run([sys.executable, GENERATOR, str(MILLION), src], timeout=1800)
    truth.run(["gcc", "-c", "-Wa,--gsframe", os.path.join(src, "functions.s"), "-o",
               os.path.join(src, "functions.o")], timeout=3600)
    builds = {}
    for sub in ("intact", "ehfram", "stripd"):
        os.makedirs(os.path.join(base, sub))
        builds[sub] = truth.Build(os.path.join(base, sub), os.path.join(base, sub, "prog"), [])
    truth.run(["gcc", "-O2", "-Wa,--gsframe", os.path.join(src, "main.c"),
               os.path.join(src, "functions.o"), "-o", builds["intact"].exe], timeout=1800)
    truth.run(["strip", "--strip-all", builds["intact"].exe, "-o", builds["ehfram"].exe])
    truth.run(["strip", "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr",
               builds["intact"].exe, "-o", builds["stripd"].exe])
    shutil.rmtree(src)  # 380 MB of source and object
    return truth.Pair("million", truth.X86_64, builds["intact"], builds["stripd"],
                      builds["ehfram"])


def build(name, out_dir):
    case = CASES[name]
    base = os.path.join(out_dir, "x86_64", name)
    source = GENERATOR if name == "million" else STACKS
    with open(source, "rb") as f:
        stamp = hashlib.sha256(repr(case).encode() + f.read()).hexdigest()
    stamp_file = os.path.join(base, "stamp")
    if os.path.isfile(stamp_file) and open(stamp_file).read() == stamp:
        return base
    if name == "million":
        pair = _million_pair(out_dir)
    else:
        pair = truth.build_pair(case, truth.X86_64, out_dir, os.path.dirname(STACKS))
    for build_ in (pair.eh_frame, pair.stripped):
        truth.make_core(build_, truth.X86_64, timeout=600)
    with open(stamp_file, "w") as f:
        f.write(stamp)
    return base


def main():
    out_dir = os.path.abspath(sys.argv[1])
    for name in sys.argv[2:]:
        print(name, build(name, out_dir), flush=True)


if __name__ == "__main__":
    main()
