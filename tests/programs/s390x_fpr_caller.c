// As s390x_frames.c, but dynamic (alloca: CFA = r11 + 320) calls crash_leaf itself, which
// keeps r11 in f0 (a flexible FDE): dynamic's CFA is f0 + 320, from an FPR. A qemu core holds
// no FPR, so GDB and we stop there alike; live, under qemu's GDB stub, f0 is read and the
// stack goes on: main -> framed -> dynamic -> crash_leaf.
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

long crash_leaf(long a, long b, long c, long d, long e);

NOINLINE long dynamic(int n) {
  char* p = __builtin_alloca(n);
  memset(p, n, n);
  KEEP(p);
  return crash_leaf(p[0], p[1], n, 4, 5) + p[n - 1];
}

NOINLINE long framed(int n) {
  char buf[64];
  memset(buf, n, sizeof buf);
  KEEP(buf);
  return dynamic(n + 16) + buf[n & 63];
}

int main(int argc, char** argv) {
  (void)argv;
  return (int)framed(argc);
}
