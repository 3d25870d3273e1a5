// The C part of the SFrame corpus that test_sframe_corpus.py builds with binutils 2.47's gas
// and ld for x86_64, AArch64 and s390x (executables, PIEs, shared libraries, objects, static
// links): frames of every kind gcc -O2 writes rows for. It is never run; only its tables are
// compared with readelf's.
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile int sink;

// No frame: the CFA stays at the entry SP all through.
NOINLINE int leaf(int x) { return x * 3 + sink; }

// A frame with a stack array and a call: RA (and FP where the ABI saves it) on the stack.
NOINLINE int framed(int x) {
  char buf[64];
  memset(buf, x, sizeof buf);
  KEEP(buf);
  return leaf(x) + buf[x & 63];
}

// alloca: the CFA moves to the frame pointer.
NOINLINE int dynamic(int n) {
  char* p = __builtin_alloca(n);
  memset(p, 1, n);
  KEEP(p);
  return framed(p[n - 1]);
}

// Many live values and no call: every callee-saved register saved (s390x: one stmg of r6-r15).
NOINLINE long busy_leaf(long a, long b, long c) {
  long v[12];
  for (int i = 0; i < 12; ++i) v[i] = a * i + b;
  long s = 0;
  for (long i = 0; i < c; ++i)
    s += v[i % 12] * v[(i + 5) % 12] ^ (v[(i + 7) % 12] + s) ^ (v[(i + 3) % 12] >> 3) ^
         (v[(i + 9) % 12] << 2) ^ (v[(i + 1) % 12] * s);
  return s;
}

#if defined(__x86_64__)
// Realigned for 32-byte locals: the CFA moves to the frame pointer. (The flexible FDEs of the
// corpus are hand-written: sframe_corpus_<arch>.s.)
NOINLINE __attribute__((force_align_arg_pointer, target("avx"))) int realigned(int n) {
  _Alignas(32) volatile char v[64];
  memset((char*)v, n, sizeof v);
  return leaf(v[n & 63]);
}
#else
NOINLINE int realigned(int n) { return leaf(n); }
#endif

// Calls into libc through the PLT.
int corpus_entry(int argc) {
  printf("%d\n", dynamic(argc + 16) + realigned(argc) + (int)busy_leaf(argc, 3, 40));
  return (int)strlen("corpus") + argc;
}
