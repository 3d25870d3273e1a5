// Dynamic stack allocation and stack realignment: alloca, a VLA, a function entered with a
// misaligned stack (force_align_arg_pointer) and 32-byte AVX locals (on x86_64 these make GCC
// realign the stack and compute the CFA from the frame pointer or a DRAP register).
#include <alloca.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile int *volatile target;

#if defined(__x86_64__)
#include <immintrin.h>
NOINLINE __attribute__((target("avx"))) int avx_locals(int n) {
  __m256 v[2];
  v[0] = _mm256_set1_ps((float)n);
  v[1] = _mm256_add_ps(v[0], v[0]);
  KEEP(v);
  *target = n;  // SIGSEGV with a realigned frame
  return (int)v[1][0];
}
NOINLINE __attribute__((force_align_arg_pointer)) int realigned(int n) {
  return avx_locals(n + 1) + 1;
}
#else
NOINLINE int realigned(int n) {
  _Alignas(64) char v[64];
  memset(v, n, sizeof v);
  KEEP(v);
  *target = n;  // SIGSEGV with an over-aligned local
  return v[n & 63];
}
#endif

NOINLINE int with_vla(int n) {
  char vla[n * 16 + 8];
  memset(vla, 1, sizeof vla);
  KEEP(vla);
  return realigned(n) + vla[n];
}

NOINLINE int with_alloca(int n) {
  char *p = alloca((unsigned)n * 100 + 24);
  memset(p, 2, 24);
  KEEP(p);
  return with_vla(n + 3) + p[3];
}

int main(int argc, char **argv) {
  (void)argv;
  return with_alloca(argc);
}
