// s390x frames as gcc -O2 and gas 2.47 describe them in SFrame v3, crashed under qemu-s390x:
// main -> dynamic (alloca: the CFA is r11 + 320, a default FDE based on the FP) -> framed (a
// stack array; stmg saves r6-r15, r11 at the CFA - 72) -> crash_leaf (s390x_crash_leaf.c: a
// flexible FDE, FP in f0). framed bases its CFA on the SP, so unwinding past the leaf needs
// no FPR, which a qemu core lacks; framed's stmg slot gives dynamic its r11.
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

long crash_leaf(long a, long b, long c, long d, long e);

NOINLINE long framed(int n) {
  char buf[64];
  memset(buf, n, sizeof buf);
  KEEP(buf);
  return crash_leaf(buf[0], buf[1], n, 4, 5) + buf[n & 63];
}

NOINLINE long dynamic(int n) {
  char* p = __builtin_alloca(n);
  memset(p, n, n);
  KEEP(p);
  return framed(p[0] + n) + p[n - 1];
}

int main(int argc, char** argv) {
  (void)argv;
  return (int)dynamic(argc + 16);
}
