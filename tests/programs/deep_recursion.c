// 10,000 frames of recursion, then a fault at the deepest one. The local buffer and the use
// of the result after the call keep the compiler from turning the recursion into a loop.
#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile int *volatile target;

NOINLINE int recurse(int depth) {
  char local[16];
  KEEP(local);
  if (depth == 0) {
    *target = 1;  // SIGSEGV at frame #0; recurse() frames #1..#9999 above it
    return 0;
  }
  int r = recurse(depth - 1);
  KEEP(local);
  return r + local[depth & 15];
}

int main(void) { return recurse(9999); }
