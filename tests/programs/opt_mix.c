// -O2 build: frameless leaves (the default at -O2) under functions kept at -O0, which set up
// rbp/x29 frames. The leaf faults on a null store.
#define FP_FUNC __attribute__((noinline, optimize("O0")))
#define LEAF __attribute__((noinline))

volatile int *volatile target;  // null: the store faults

LEAF int leaf_store(int v) {
  *target = v;  // SIGSEGV here, in a frameless leaf
  return v + 1;
}

LEAF int leaf_middle(int v) { return leaf_store(v * 3) + 1; }

FP_FUNC int fp_outer(int v) {
  int local[4] = {v, v + 1, v + 2, v + 3};
  return leaf_middle(local[v & 3]) + local[0];
}

FP_FUNC int fp_top(int v) { return fp_outer(v + 1) * 2; }

int main(int argc, char **argv) {
  (void)argv;
  return fp_top(argc);
}
