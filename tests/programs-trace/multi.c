/* A C program for `unwindkit trace build`: several functions in two files, branches and a
 * loop (so line numbers go up and down), a static helper, and a long function whose line
 * ranges need the LNx + PCx forms. Built with -g at -O0 and -O2 by test_trace_build.py. */
#include <stdio.h>
#include <stdlib.h>

int helper_twice(int x);

static int classify(int v) {
  if (v < 0)
    return -1;
  if (v == 0)
    return 0;
  return 1;
}

int accumulate(const int *values, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) {
    switch (classify(values[i])) {
      case -1:
        total -= values[i];
        break;
      case 0:
        total += 100;
        break;
      default:
        total += helper_twice(values[i]);
        break;
    }
  }
  return total;
}

int main(int argc, char **argv) {
  int values[8];
  for (int i = 0; i < 8; ++i)
    values[i] = (argc > 1 ? atoi(argv[1]) : 3) - i;
  int r = accumulate(values, 8);
  printf("%d\n", r);
  return r == 12345 ? 1 : 0;
}
