// Built with -O2 -fomit-frame-pointer: no frame pointer anywhere, each frame adjusts the
// stack pointer by a different amount (arrays kept alive by an empty asm).
#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile int *volatile target;

NOINLINE int level3(int v) {
  char pad[40];
  KEEP(pad);
  *target = v;  // SIGSEGV
  return pad[v & 31];
}

NOINLINE int level2(int v) {
  long pad[33];
  KEEP(pad);
  return level3(v + 2) + (int)pad[v & 7];
}

NOINLINE int level1(int v) {
  int pad[300];
  KEEP(pad);
  return level2(v + 1) + pad[v & 15];
}

int main(int argc, char **argv) {
  (void)argv;
  return level1(argc);
}
