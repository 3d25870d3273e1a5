#!/usr/bin/env python3
"""Writes an assembly file whose `__LD,__compact_unwind` entries are written out by hand
(no .cfi directives): one tiny function per encoding, with more than 127 distinct encodings
so that the linker needs regular pages and page-local encodings.

usage: gen_table.py x86_64|arm64 OUT.s
"""
import sys


def encodings(arch):
    if arch == "x86_64":
        # STACK_IMMD with 0..2 saved registers, stack sizes 1..200 words: 600 distinct
        # encodings, more than a compressed page's 8-bit encoding index can name.
        out = [0x02000000 | (k << 16) | (c << 10) for c in range(3) for k in range(1, 201)]
        # STACK_IMMD with every count of saved registers (permutation 0).
        out += [0x02100000 | (c << 10) for c in range(1, 7)]
        return out
    # arm64: FRAMELESS sizes (16-byte units) 1..190; FRAME with every X and D pair;
    # FRAMELESS with saved pairs; FRAME_PAUTH_LR.
    out = [0x02000000 | (k << 12) for k in range(1, 191)]
    out += [0x04000000 | b for b in (0x1, 0x3, 0x1F, 0x100, 0x300, 0xF00, 0xF1F)]
    out += [0x02010000 | 0x101, 0x02002000 | 0x3]
    out += [0x05000000, 0x05000000 | 0x101]
    return out


def main():
    arch, path = sys.argv[1], sys.argv[2]
    encs = encodings(arch)
    ret = "retq" if arch == "x86_64" else "ret"
    ptr = ".quad"
    lines = ["\t.section __TEXT,__text,regular,pure_instructions", "\t.globl _main",
             "\t.p2align 2"]
    for i in range(len(encs)):
        lines += [f"_f{i}:", "\tnop", f"\t{ret}"]
    lines += ["_main:", f"\t{ret}", "_end_of_text:"]
    lines += ["\t.section __LD,__compact_unwind,regular,debug", "\t.p2align 3"]
    for i, e in enumerate(encs):
        lines += [f"\t{ptr} _f{i}", "\t.long 2" if arch == "x86_64" else "\t.long 8",
                  f"\t.long {e:#010x}", f"\t{ptr} 0", f"\t{ptr} 0"]
    lines += [f"\t{ptr} _main", "\t.long 1" if arch == "x86_64" else "\t.long 4",
              "\t.long 0x02010000" if arch == "x86_64" else "\t.long 0x02000000",
              f"\t{ptr} 0", f"\t{ptr} 0"]
    lines += ["\t.subsections_via_symbols", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
