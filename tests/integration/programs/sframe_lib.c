/* SFrame fixture library: exported functions calling through the PLT. */
#include <stdlib.h>
#include <string.h>

int sframe_lib_leaf(int x) { return x + 1; }

int sframe_lib_alloc(int n) {
  char *p = malloc((size_t)n + 1);
  if (!p) return -1;
  memset(p, 'a', (size_t)n);
  p[n] = 0;
  int len = (int)strlen(p);
  free(p);
  return len + sframe_lib_leaf(n);
}
