/* SFrame fixture: a few functions with different frames (leaf, frame-pointer, big stack). */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static int leaf(int x) { return x * 3 + 1; }

__attribute__((noinline)) static int big_frame(int n) {
  volatile char buf[4096];
  memset((char *)buf, n, sizeof buf);
  return buf[n % 4096] + leaf(n);
}

__attribute__((noinline)) static int recurse(int n) {
  if (n <= 0) return big_frame(n + 7);
  return recurse(n - 1) + 1;
}

int main(int argc, char **argv) {
  (void)argv;
  printf("%d\n", recurse(argc + 3));
  return 0;
}
