/* x86_64 chain, frameless half (built with -fomit-frame-pointer -mno-red-zone): STACK_IMMD
   with different saved-register sets (so different permutations), STACK_IND (a 100 KB frame),
   and the innermost leaf, which saves every callee-saved register and traps (ud2) so the
   runner's signal handler records the registers and the stack. */
#include "chain_x86_64.h"

u64 chain_ind_big(u64 *ctx);
u64 chain_dwarf(u64 *ctx);
u64 chain_leaf(u64 *ctx);

/* 3: STACK_IMMD saving rbx, r13 and rbp. */
__attribute__((noinline)) u64 chain_immd_a(u64 *ctx) {
  volatile u64 local[6] = {7, 8, 9, 10, 11, 12};
  RECORD_RA(ctx, 3);
  X86_CALL(ctx, 3, chain_ind_big,
           SET(rbx, 0xa5a5000000000303) SET(r13, 0xa5a500000000030d)
           SET(rbp, 0xa5a5000000000306),
           "rbx", "r13", "rbp");
  chain_keep(local);
  return local[2];
}

/* 4: STACK_IND: the frame is too big for STACK_IMMD's 8-bit size field. */
__attribute__((noinline)) u64 chain_ind_big(u64 *ctx) {
  volatile u64 big[100000 / 8];
  big[0] = 13;
  big[100000 / 8 - 1] = 14;
  RECORD_RA(ctx, 4);
  X86_CALL(ctx, 4, chain_dwarf,
           SET(r14, 0xa5a500000000040e) SET(rbp, 0xa5a5000000000406)
           SET(r12, 0xa5a500000000040c),
           "r14", "rbp", "r12");
  chain_keep(big);
  return big[1];
}

/* 5 is chain_dwarf (chain_x86_64_dwarf.S). */

/* 6: STACK_IMMD saving only r15. */
__attribute__((noinline)) u64 chain_immd_b(u64 *ctx) {
  volatile u64 local[3] = {15, 16, 17};
  RECORD_RA(ctx, 6);
  X86_CALL(ctx, 6, chain_leaf, SET(r15, 0xa5a500000000060f), "r15");
  chain_keep(local);
  return local[1];
}

/* 7: frameless leaf under register pressure: twelve live values and a trap that clobbers
   every callee-saved register, so all six are pushed and the rest spilled. */
__attribute__((noinline)) u64 chain_leaf(u64 *ctx) {
  const volatile u64 *p = ctx + CHAIN_REC(CHAIN_MAX - 1);
  u64 a = 0, b = 1, c = 2, d = 3, e = 4, f = 5, g = 6, h = 7, i = 8, j = 9, k = 10, l = 11;
  RECORD_RA(ctx, 7);
  ctx[0] = 7;
  for (u64 m = 0; m < 4; ++m) {
    a += p[m] * b; b ^= p[m + 1] + c; c += d * p[m + 2]; d -= e ^ p[m + 3];
    e += f * p[m + 4]; f ^= g + p[m + 5]; g += h * p[m + 6]; h -= i ^ p[m + 7];
    i += j * a; j ^= k + b; k += l * c; l -= a ^ d;
  }
  __asm__ volatile("ud2" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f)
                   : : "rbx", "r12", "r13", "r14", "r15", "rbp", "memory");
  return a + b + c + d + e + f + g + h + i + j + k + l;
}
