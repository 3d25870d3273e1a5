/* The second compile unit of multi.c: its own HDR module in the built .trace. */
#include <string.h>

static volatile int sink;

int helper_twice(int x) {
  char buffer[64];
  memset(buffer, x & 0x7f, sizeof buffer);
  for (unsigned i = 0; i < sizeof buffer; ++i)
    sink += buffer[i];
  return 2 * x;
}
