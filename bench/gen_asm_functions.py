#!/usr/bin/env python3
"""Writes an x86_64 assembly file of N functions with CFI directives, for scripts/bench's
"browser-sized module" (`gcc -c -Wa,--gsframe` makes both .eh_frame and .sframe of it in
about a minute; C through cc1 would take hours), and the C main that calls into it.

Four shapes of function, by index: a leaf (one SFrame row), one that saves RBX around a call,
one with an RBP frame (CFA based on RBP), one that reserves stack with `sub rsp`. Every
non-leaf function i calls function next(i), far away in the file, while its depth argument
(EDI) lasts, and faults where it runs out: `uk_chain(depth)` makes a stack of `depth` frames
spread over the whole module.
Usage: gen_asm_functions.py N OUT_DIR   (writes OUT_DIR/functions.s and OUT_DIR/main.c)
"""
import os
import sys

LEAF = "\tlea {a}(%rdi), %eax\n\tret\n"
# Each caller: EDI - 1; at 0 the store to address 0 (RDI is 0) faults; else call on.
CALL = "\tsub $1, %edi\n\tjg 1f\n\tmovl %edi, (%rdi)\n1:\tcall f{n}\n"
SAVES_RBX = ("\tpush %rbx\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbx, -16\n"
             "\tmov %edi, %ebx\n" + CALL +
             "\tadd %ebx, %eax\n\tpop %rbx\n\t.cfi_def_cfa_offset 8\n\tret\n")
RBP_FRAME = ("\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16\n"
             "\tmov %rsp, %rbp\n\t.cfi_def_cfa_register %rbp\n\tsub $32, %rsp\n" + CALL +
             "\tleave\n\t.cfi_def_cfa %rsp, 8\n\tret\n")
SUB_RSP = ("\tsub $24, %rsp\n\t.cfi_def_cfa_offset 32\n" + CALL +
           "\tadd $24, %rsp\n\t.cfi_def_cfa_offset 8\n\tret\n")
SHAPES = (LEAF, SAVES_RBX, RBP_FRAME, SUB_RSP)


def next_caller(i, count):
    """A caller (shape 1-3) far from i, the same for every run (count: a multiple of 4)."""
    j = (i * 7919 + 104729) % count
    return j - j % 4 + 1 + i % 3


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    if count % 4:
        raise SystemExit("gen_asm_functions.py: N must be a multiple of 4")
    with open(os.path.join(out, "functions.s"), "w") as f:
        f.write("\t.text\n\t.globl uk_chain\n\t.type uk_chain, @function\n"
                "uk_chain:\n\tjmp f1\n\t.size uk_chain, .-uk_chain\n")
        for i in range(count):
            body = SHAPES[i % 4].format(a=i % 97, n=next_caller(i, count))
            f.write(f"\t.type f{i}, @function\nf{i}:\n\t.cfi_startproc\n{body}"
                    f"\t.cfi_endproc\n\t.size f{i}, .-f{i}\n")
        f.write('\t.section .note.GNU-stack,"",@progbits\n')
    with open(os.path.join(out, "main.c"), "w") as f:
        f.write("int uk_chain(int depth);\nint main(void) { return uk_chain(200); }\n")


if __name__ == "__main__":
    main()
