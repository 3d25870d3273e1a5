#!/usr/bin/env python3
"""Compact unwind on running code: Mach-O chains run on Linux, unwound by our rules.

For x86_64 (natively) and arm64 (an AArch64 Linux runner under qemu-aarch64), builds the
chain in tests/fixtures-src/macho/chain/ with the release's clang and ld64.lld, maps its segments at
their addresses in the runner, and runs it: every function loads known values into the
callee-saved registers it owns and records, with the instructions of its call, every
callee-saved register, sp, fp and the return address; the innermost leaf traps and the
runner's signal handler records the registers and the stack. The checker
(tests/tools/compact_unwind_run_check.cpp) unwinds that state with our lookup, lowering and
stepper and compares each frame with the records. Here we also check that
  - the image has no rebases or binds (its bytes run unrelocated at their addresses);
  - the checker walked the whole chain in order, and the encodings it used are the ones
    llvm-objdump lists for those functions;
  - each function's encoding (llvm-objdump's) has the shape the chain is built for, e.g. a
    FRAME with D pairs only and a FRAMELESS leaf with X and D pairs;
  - every mode compiled code can have was unwound: x86_64 RBP_FRAME, STACK_IMMD and
    STACK_IND (100 KB frame), arm64 FRAME (X and D pairs, D pairs alone) and FRAMELESS with
    saved pairs, and on both a DWARF-mode function in the middle of the chain (its rule comes
    from __eh_frame through the core's DWARF handover): x86_64 hand-written assembly that
    saves registers with `mov` (chain_x86_64_dwarf.S), arm64 a function clang gives fp/lr
    saves without a frame record.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth.tools import SKIP_EXIT, Skip, llvm, need, run  # noqa: E402

SRC = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests/fixtures-src/macho/chain")
CHECK = os.path.join(os.environ["UNWINDKIT_BUILD_DIR"], "tests/compact_unwind_run_check")
FAILURES = []



def mode(e):
    return (e >> 24) & 0xF


def x86_count(e):
    return (e >> 10) & 7


def x86_bp_slots(e):
    return sum(1 for i in range(5) if (e >> (3 * i)) & 7)


# What each function's encoding (as llvm-objdump lists it) must show for the chain to test
# what it claims: guards against a compiler that allocates registers differently.
X86_SHAPES = {
    "_chain_dwarf": (lambda e: mode(e) == 4, "DWARF mode"),
    "_chain_leaf": (lambda e: mode(e) == 2 and x86_count(e) == 6,
                    "STACK_IMMD saving all six registers"),
    "_chain_immd_b": (lambda e: mode(e) == 2 and x86_count(e) >= 1, "STACK_IMMD with a push"),
    "_chain_ind_big": (lambda e: mode(e) == 3 and x86_count(e) >= 2,
                       "STACK_IND with saved registers"),
    "_chain_immd_a": (lambda e: mode(e) == 2 and x86_count(e) >= 2,
                      "STACK_IMMD with saved registers"),
    "_chain_rbp_two": (lambda e: mode(e) == 1 and x86_bp_slots(e) >= 2,
                       "RBP_FRAME with saved registers"),
    "_chain_entry": (lambda e: mode(e) == 1 and x86_bp_slots(e) == 5,
                     "RBP_FRAME with all five slots used"),
}
A64_X_PAIRS, A64_D_PAIRS = 0x01F, 0xF00
A64_SHAPES = {
    "_chain_leaf": (lambda e: mode(e) == 2 and e & A64_X_PAIRS and e & A64_D_PAIRS,
                    "FRAMELESS with X and D pairs"),
    "_chain_dwarf": (lambda e: mode(e) == 3, "DWARF mode"),
    "_chain_frame_x": (lambda e: mode(e) == 4 and e & A64_X_PAIRS and e & A64_D_PAIRS,
                       "FRAME with X and D pairs"),
    "_chain_frame_d": (lambda e: mode(e) == 4 and not e & A64_X_PAIRS and e & A64_D_PAIRS,
                       "FRAME with D pairs only"),
    "_chain_entry": (lambda e: mode(e) == 4 and e & 0xFFF == A64_X_PAIRS | A64_D_PAIRS,
                     "FRAME with every X and D pair"),
}

# Per architecture: chain functions innermost first and the shape of each, modes that must
# occur, assembly sources besides the two C halves, the runner's compiler and how to run it.
ARCHES = {
    "x86_64": {
        "functions": ["_chain_leaf", "_chain_immd_b", "_chain_dwarf", "_chain_ind_big",
                      "_chain_immd_a", "_chain_rbp_two", "_chain_entry"],
        "shapes": X86_SHAPES,
        "modes": {"RBP_FRAME", "STACK_IMMD", "STACK_IND", "DWARF"},
        "asm": ["chain_x86_64_dwarf.S"],
        "cc": "gcc",
        "exec": [],
        "fp_flags": ["-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer", "-mno-red-zone"],
        "nofp_flags": ["-fomit-frame-pointer", "-mno-red-zone"],
    },
    "arm64": {
        "functions": ["_chain_leaf", "_chain_frame_x", "_chain_dwarf", "_chain_frame_d",
                      "_chain_entry"],
        "shapes": A64_SHAPES,
        "modes": {"FRAME", "FRAMELESS", "DWARF"},
        "asm": [],
        "cc": "aarch64-linux-gnu-gcc",
        "exec": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
        "fp_flags": ["-fno-omit-frame-pointer"],
        "nofp_flags": ["-fomit-frame-pointer"],
    },
}


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def build_image(tmp, arch, cfg):
    objs = []
    for half in ("fp", "nofp"):
        o = os.path.join(tmp, f"chain-{arch}-{half}.o")
        run([llvm("clang"), "-target", f"{arch}-apple-macos11", "-O2", "-fno-stack-protector",
             *cfg[f"{half}_flags"], "-c", os.path.join(SRC, f"chain_{arch}_{half}.c"), "-o", o])
        objs.append(o)
    for src in cfg["asm"]:
        o = os.path.join(tmp, f"{os.path.splitext(src)[0]}.o")
        run([llvm("clang"), "-target", f"{arch}-apple-macos11", "-I", SRC, "-c",
             os.path.join(SRC, src), "-o", o])
        objs.append(o)
    image = os.path.join(tmp, f"chain-{arch}.out")
    run([llvm("ld64.lld"), "-arch", arch, "-platform_version", "macos", "11.0", "11.0",
         "-e", "_chain_entry", "-o", image, *objs])
    return image


def symbols(image):
    out = run([llvm("llvm-nm"), image]).stdout
    return {m.group(2): int(m.group(1), 16)
            for m in re.finditer(r"^([0-9a-f]+) [Tt] (\S+)$", out, re.M)}


def objdump_encodings(image, image_base):
    """Function address -> encoding, from llvm-objdump's second-level pages."""
    out = run([llvm("llvm-objdump"), "--macho", "--unwind-info", image]).stdout
    return {image_base + int(m.group(1), 16): int(m.group(2), 16)
            for m in re.finditer(r"function offset=0x([0-9a-f]+), encoding(?:\[\d+\])?=0x([0-9a-f]+)",
                                 out)}


def check_arch(tmp, arch, cfg):
    for tool in (cfg["cc"], *cfg["exec"][:1]):
        need(tool)
    image = build_image(tmp, arch, cfg)
    relocs = run([llvm("llvm-objdump"), "--macho", "--rebase", "--bind", image]).stdout
    rows = [l for l in relocs.splitlines()
            if l.strip() and not l.endswith(":") and not l.startswith(("segment", "Rebase",
                                                                        "Bind"))]
    expect(not rows, f"{arch}: the image has rebases or binds: {rows}")

    runner = os.path.join(tmp, f"runner-{arch}")
    run([cfg["cc"], "-O2", "-static", "-Wall", "-Wextra", "-Werror", "-o", runner,
         os.path.join(SRC, "runner.c")])
    syms = symbols(image)
    state = run([*cfg["exec"], runner, image, f"{syms['_chain_entry']:x}"], timeout=120).stdout
    state_path = os.path.join(tmp, f"state-{arch}.txt")
    with open(state_path, "w") as f:
        f.write(state)

    p = run([CHECK, image, state_path], check=False)
    print(f"--- {arch}\n{p.stdout}{p.stderr}")
    expect(p.returncode == 0, f"{arch}: the checker found mismatches (exit {p.returncode})")

    frames = re.findall(r"^frame \d+ pc 0x[0-9a-f]+ function (\S+) start 0x([0-9a-f]+) "
                        r"encoding 0x([0-9a-f]+) mode (\S+)$", p.stdout, re.M)
    expect([f[0] for f in frames] == cfg["functions"],
           f"{arch}: walked {[f[0] for f in frames]}, the chain is {cfg['functions']}")
    ref = objdump_encodings(image, syms["__mh_execute_header"])
    for name, start, enc, _ in frames:
        expect(int(start, 16) == syms.get(name),
               f"{arch}: {name} starts at {start}, llvm-nm says {syms.get(name, 0):#x}")
        expect(ref.get(int(start, 16)) == int(enc, 16),
               f"{arch}: {name}: our lookup gave encoding {enc}, llvm-objdump lists "
               f"{ref.get(int(start, 16), 0):#010x}")
    for name, (ok, what) in cfg["shapes"].items():
        e = ref.get(syms.get(name, -1), 0)
        expect(ok(e), f"{arch}: {name} is {e:#010x} in llvm-objdump, not {what}")
    seen = set(re.findall(r"^mode (\S+)$", p.stdout, re.M))
    expect(cfg["modes"] <= seen, f"{arch}: modes unwound {sorted(seen)}, "
                                 f"missing {sorted(cfg['modes'] - seen)}")
    return seen


def main():
    try:
        for tool in (llvm("clang"), llvm("ld64.lld"), llvm("llvm-nm"), llvm("llvm-objdump")):
            need(tool)
    except Skip as e:
        print(f"SKIP: {e}")
        return SKIP_EXIT
    if not os.path.exists(CHECK):
        print(f"FAIL: {CHECK} is not built")
        return 1
    ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch, cfg in ARCHES.items():
            try:
                seen = check_arch(tmp, arch, cfg)
                print(f"{arch}: modes unwound on running code: {', '.join(sorted(seen))}")
                ran += 1
            except Skip as e:
                print(f"SKIP {arch}: {e}")
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                ran += 1
                expect(False, f"{arch}: {e}")
    # The tools are here, so an architecture that could not run is a fault of this machine's
    # set-up (scripts/deps), not a reason to pass.
    expect(ran > 0, "every architecture skipped")
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
