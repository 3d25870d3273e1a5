/* Functions of every compact-unwind shape clang produces: frame-pointer frames, frameless
   leaves, callee-saved registers under pressure, and a 100 KB frame (STACK_IND on x86_64,
   whose stack size does not fit the encoding's 8-bit field). No headers: Apple targets have
   no SDK here. */
int sink(int v);

__attribute__((noinline)) int leaf(int a) { return a * 3 + 1; }

/* Six values live across calls: every callee-saved register is needed. */
__attribute__((noinline)) int pressure(int a, int b, int c, int d, int e, int f) {
  int x1 = sink(a), x2 = sink(b), x3 = sink(c), x4 = sink(d), x5 = sink(e), x6 = sink(f);
  int y1 = sink(x1 + x2), y2 = sink(x3 + x4);
  return x1 * x2 + x3 * x4 + x5 * x6 + y1 * y2 + a * b * c * d * e * f;
}

/* A leaf that uses many registers but makes no call. */
__attribute__((noinline)) long leaf_pressure(long *p, long n) {
  long a = 0, b = 1, c = 2, d = 3, e = 4, f = 5, g = 6, h = 7, i = 8, j = 9, k = 10, l = 11;
  for (long m = 0; m < n; ++m) {
    a += p[m] * b; b ^= p[m + 1] + c; c += d * p[m + 2]; d -= e ^ p[m + 3];
    e += f * p[m + 4]; f ^= g + p[m + 5]; g += h * p[m + 6]; h -= i ^ p[m + 7];
    i += j * a; j ^= k + b; k += l * c; l -= a ^ d;
  }
  return a + b + c + d + e + f + g + h + i + j + k + l;
}

__attribute__((noinline)) int big(int n) {
  volatile char buf[100000];
  buf[n] = (char)n;
  return buf[n / 2] + sink(n);
}

__attribute__((noinline)) int sink(int v) { return v ^ 0x55; }

int main(void) {
  long arr[16];
  for (int i = 0; i < 16; ++i) arr[i] = i;
  return big(leaf(2)) + pressure(1, 2, 3, 4, 5, 6) + (int)leaf_pressure(arr, 4);
}
