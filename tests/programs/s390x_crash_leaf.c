// The leaf both s390x truth programs crash in (s390x_frames.c, s390x_fpr_caller.c): ten live
// values need r6 and r8-r11, which gcc -O2 keeps in FPRs in a leaf rather than on the stack,
// and gas 2.47 describes that in SFrame v3 with a flexible FDE (FP in f0, RA left in r14). It
// faults on a null store while they are there.
#define LIVE(a, b, c, d, e, f, g, h, i, j)                                                     \
  __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h), \
                   "+r"(i), "+r"(j))

volatile long *volatile target;  // null: the store faults

__attribute__((noinline)) long crash_leaf(long a, long b, long c, long d, long e) {
  long x0 = a * b, x1 = b * c, x2 = c * d, x3 = d * e, x4 = e * a, x5 = a + b * c;
  long x6 = x0 ^ x1, x7 = x2 ^ x3, x8 = x4 + x5, x9 = x6 * x7;
  LIVE(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9);  // every x in a register from here
  *target = x9;                                  // SIGSEGV here
  LIVE(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9);  // and still after it
  return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9;
}
