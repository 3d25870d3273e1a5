/* CBF fixture for tests/integration/test_cbf_debuggers.py: builds a Compact Backtrace Format
 * record by hand (instruction by instruction, as shared/notes/formats.md §4 describes it; not
 * with unwindkit's encoder) whose frames are addresses of the functions below, stores it in
 * globals and aborts, so the core holds it. Built -no-pie: `nm` addresses are run-time ones.
 *
 * The record (64-bit), with the frame list the test expects:
 *   pc    alpha + 4          absolute (0x1f + 8 bytes)
 *   ra    beta + 8           absolute (0x2f + 8 bytes)
 *   ra    beta + 8  x3 more  rep, count inside (0x82)
 *   omit  5                  count inside (0x44)
 *   ra    gamma_fn + 3       relative to beta + 8, fewest signed bytes
 *   ra    gamma_fn + 0       relative; as a return address it belongs to the call at the end
 *                            of delta_fn (noreturn abort), just before gamma_fn
 *   async delta_fn + 0       absolute
 *   omit  200                count in one following byte (0x60 0xc8)
 *   pc    main + 1           relative to delta_fn
 *   truncated                trunc (0x01)
 * The same record is copied to the last bytes of a page followed by an unmapped page
 * (cbf_tail), where any read past the record fails.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

unsigned char cbf_blob[128];
unsigned long cbf_blob_len;
unsigned char *cbf_tail;

static unsigned long put_absolute(unsigned char *p, unsigned char kind, uint64_t address) {
  p[0] = kind | 0x08 | 7; /* absolute, 7 + 1 = 8 bytes */
  for (int i = 0; i < 8; ++i) p[1 + i] = (unsigned char)(address >> (8 * (7 - i)));
  return 9;
}

/* A delta in as few big-endian bytes as keep its sign (the decoder sign-extends the first). */
static unsigned long put_relative(unsigned char *p, unsigned char kind, int64_t delta) {
  int n = 1;
  while (n < 8 && !(delta >= -(INT64_C(1) << (8 * n - 1)) && delta < (INT64_C(1) << (8 * n - 1))))
    ++n;
  p[0] = kind | (unsigned char)(n - 1);
  for (int i = 0; i < n; ++i) p[1 + i] = (unsigned char)((uint64_t)delta >> (8 * (n - 1 - i)));
  return 1 + (unsigned long)n;
}

void alpha(void);
void beta(int depth);
void gamma_fn(void);
void delta_fn(void);
int main(void);

static unsigned long build_record(unsigned char *p) {
  const uint64_t a = (uintptr_t)&alpha + 4, b = (uintptr_t)&beta + 8;
  const uint64_t g = (uintptr_t)&gamma_fn + 3, d = (uintptr_t)&delta_fn, m = (uintptr_t)&main + 1;
  unsigned long n = 0;
  p[n++] = 0 << 2 | 2; /* info: version 0, 64-bit */
  n += put_absolute(p + n, 0x10, a);
  n += put_absolute(p + n, 0x20, b);
  p[n++] = 0x80 | 2; /* rep: 2 + 1 more copies of the last frame */
  p[n++] = 0x40 | 4; /* omit: 4 + 1 frames */
  n += put_relative(p + n, 0x20, (int64_t)(g - b));
  n += put_relative(p + n, 0x20, -3);
  n += put_absolute(p + n, 0x30, d);
  p[n++] = 0x40 | 0x20 | 0; /* omit, count in 0 + 1 following bytes */
  p[n++] = 200;
  n += put_relative(p + n, 0x10, (int64_t)(m - d));
  p[n++] = 0x01; /* trunc */
  return n;
}

__attribute__((noinline)) void delta_fn(void) { abort(); }

__attribute__((noinline)) void gamma_fn(void) {
  cbf_blob_len = build_record(cbf_blob);
  const long page = sysconf(_SC_PAGESIZE);
  unsigned char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (two != MAP_FAILED && munmap(two + page, (size_t)page) == 0) {
    cbf_tail = two + page - cbf_blob_len;
    memcpy(cbf_tail, cbf_blob, cbf_blob_len);
  }
  delta_fn();
}

/* Recursion gives the crashing thread's backtrace a run of equal return addresses. */
__attribute__((noinline)) void beta(int depth) {
  if (depth > 0)
    beta(depth - 1);
  else
    gamma_fn();
}

__attribute__((noinline)) void alpha(void) { beta(3); }

int main(void) {
  alpha();
  return 0;
}
