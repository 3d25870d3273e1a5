/* arm64 chain, frameless half (built with -fomit-frame-pointer): the innermost leaf saves X
   and D pairs without a frame record and traps (brk), so the runner's signal handler records
   the registers and the stack; FRAMELESS is only valid in the innermost frame. And a function
   in the middle of the chain that compact unwind refers to __eh_frame (DWARF mode). */
#include "chain_arm64.h"

u64 chain_frame_x(u64 *ctx);

/* 3: DWARF mode. Its call is in assembly, so clang sees a leaf that only uses lr: it saves
   fp/lr (and the X registers it owns) without making x29 a frame pointer, which neither FRAME
   (fp set up) nor FRAMELESS (lr left in place) describes. */
__attribute__((noinline)) u64 chain_dwarf(u64 *ctx) {
  RECORD_RA(ctx, 3);
  A64_CALL(ctx, 3, chain_frame_x, SETX(23, 0x0317) SETX(24, 0x0318), "x23", "x24");
  return ctx[0];
}

/* 5: leaf under register pressure: live values across a trap that clobbers X and D pairs. */
__attribute__((noinline)) u64 chain_leaf(u64 *ctx) {
  const volatile u64 *p = ctx + CHAIN_REC(CHAIN_MAX - 1);
  u64 a = 0, b = 1, c = 2, d = 3, e = 4, f = 5, g = 6, h = 7, i = 8, j = 9, k = 10, l = 11;
  u64 ra;
  /* lr as it came in: __builtin_return_address would make clang save fp/lr (DWARF mode). */
  __asm__ volatile("mov %0, x30" : "=r"(ra));
  ctx[CHAIN_REC(5) + A64_REC_RA] = ra;
  ctx[0] = 5;
  for (u64 m = 0; m < 4; ++m) {
    a += p[m] * b; b ^= p[m + 1] + c; c += d * p[m + 2]; d -= e ^ p[m + 3];
    e += f * p[m + 4]; f ^= g + p[m + 5]; g += h * p[m + 6]; h -= i ^ p[m + 7];
    i += j * a; j ^= k + b; k += l * c; l -= a ^ d;
  }
  __asm__ volatile("brk #1" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f)
                   : : "x19", "x20", "x25", "x26", "d8", "d9", "d14", "d15", "memory");
  return a + b + c + d + e + f + g + h + i + j + k + l;
}
