#!/usr/bin/env python3
"""Writes a C program with N small functions for the SFrame benchmarks (scripts/bench).

Built with `gcc -O1 -Wa,--gsframe`, the functions give varied SFrame rows: frameless leaves
(one row), callers that keep values across a call (pushes and pops: several SP-based rows),
functions with a variable-length array (an RBP-based CFA), and loops over a stack array (a
`sub rsp`). Every function has external linkage and noinline, so each keeps its own FDE.
The functions are spread over several files of PER_FILE each (one file of 100,000 takes cc1
many minutes and gigabytes), plus main.c, which calls them all so the linker keeps them.
Deterministic: the kind of function i depends on i alone.
Usage: gen_functions.py N OUT_DIR   (writes OUT_DIR/part*.c and OUT_DIR/main.c)
"""
import os
import sys

PER_FILE = 5000
KINDS = (
    # frameless leaf
    "int f{i}(int x) {{ return x * {a} + {b}; }}",
    # keeps x across a call: saves a callee-saved register
    "int f{i}(int x) {{ int y = f{p}(x + {a}); return y * x + {b}; }}",
    # variable-length array: the CFA is based on RBP
    "int f{i}(int x) {{ volatile int v[x & 15 ? x & 15 : 1]; v[0] = x; "
    "return v[0] + f{p}(x) + {b}; }}",
    # a fixed stack array and a loop
    "int f{i}(int x) {{ volatile int v[{n}]; for (int k = 0; k < {n}; ++k) v[k] = x + k; "
    "return v[x & {m}] + {b}; }}",
)


def function(i):
    kind = 0 if i == 0 else (i * 7 + i // 3) % len(KINDS)
    # A caller's callee may live in the previous file: declare it.
    decl = f"int f{i - 1}(int);\n" if kind in (1, 2) else ""
    return decl + "NI " + KINDS[kind].format(i=i, p=i - 1, a=i % 13 + 1, b=i % 101,
                                             n=4 + i % 12, m=3) + "\n"


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    for first in range(0, count, PER_FILE):
        with open(os.path.join(out, f"part{first // PER_FILE:03}.c"), "w") as f:
            f.write("#define NI __attribute__((noinline))\n")
            for i in range(first, min(first + PER_FILE, count)):
                f.write(function(i))
    with open(os.path.join(out, "main.c"), "w") as f:
        for i in range(count):
            f.write(f"int f{i}(int);\n")
        f.write("typedef int (*fn)(int);\nstatic fn const table[] = {\n")
        for i in range(count):
            f.write(f"  f{i},\n")
        f.write("};\nint main(int argc, char** argv) {\n  (void)argv;\n  int s = 0;\n"
                f"  for (int i = 0; i < {count}; ++i) s += table[i](argc);\n"
                "  return s & 1;\n}\n")


if __name__ == "__main__":
    main()
