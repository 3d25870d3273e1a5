/* Second source file of the C program of test_trace_debuggers.py. */
#include <stddef.h>

__attribute__((noinline)) static void poke(int *target, int value) {
  *target = value; /* target is NULL here: SIGSEGV */
}

__attribute__((noinline)) int visit(int *cells, int depth) {
  int *target = depth > 2 ? NULL : cells;
  poke(target, depth);
  return cells[0];
}
