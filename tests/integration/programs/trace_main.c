/* The C program of test_trace_debuggers.py: main -> walk_list -> visit (trace_visit.c) ->
 * poke, which writes through a null pointer. Every routine is kept out of line so each one
 * is a frame of its own in the crash's backtrace. */
#include <stddef.h>

int visit(int *cells, int depth);

__attribute__((noinline)) static int walk_list(int *cells, int n) {
  int total = 0;
  total += visit(cells, n);
  return total + 1;
}

int main(void) {
  int cells[4] = {1, 2, 3, 4};
  int r = walk_list(cells, 3);
  return r;
}
