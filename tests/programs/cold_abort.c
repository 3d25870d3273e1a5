// A hot recursive function whose unlikely path (a failed check) calls abort(): gcc -O2 moves
// that path into `step.cold`, a fragment entered by a conditional jump from `step`, with the
// hot part's frame (its pushes of callee-saved registers) still on the stack. The crash is
// SIGABRT from inside the fragment: every frame above it needs the saves the hot part made,
// which the fragment's own code never shows.
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile long fail_at = 40;  // the depth whose check fails
volatile long bottom = 1000;  // where the recursion would end without it

// What a failed check prints. Cold: gcc then takes the path that calls it for never executed
// and moves it out of `step` (an abort() alone is only unlikely).
__attribute__((cold, noinline)) void report(const char *name, long depth, long a, long b) {
  fprintf(stderr, "%s: check failed at depth %ld (%ld, %ld)\n", name, depth, a, b);
}

// Values live across the recursive call keep callee-saved registers busy in every frame.
NOINLINE long step(long depth, long a, long b, const char *name) {
  if (depth == fail_at) {
    report(name, depth, a, b);
    abort();
  }
  if (depth >= bottom) return a;
  long c = a * 3 + b;
  long d = b ^ depth;
  KEEP(c);
  long r = step(depth + 1, c & 0xffff, d, name);
  KEEP(d);
  return r + c + d + a;
}

int main(int argc, char **argv) { return (int)step(argc, argc + 1, argc + 2, argv[0]); }
