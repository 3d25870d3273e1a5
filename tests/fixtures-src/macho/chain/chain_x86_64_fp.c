/* x86_64 chain, frame-pointer half (built with -fno-omit-frame-pointer): RBP_FRAME functions.
   Each one also calls chain_keep so the compiler treats it as a non-leaf (aligned stack, no
   red zone use) although its call to the next function is in assembly. */
#include "chain_x86_64.h"

u64 chain_immd_a(u64 *ctx);

__attribute__((noinline)) void chain_keep(volatile u64 *p) { p[0] += 1; }

/* 1: RBP_FRAME saving all five registers the frame encoding has slots for. */
__attribute__((noinline)) u64 chain_entry(u64 *ctx) {
  volatile u64 local[4] = {1, 2, 3, 4};
  RECORD_RA(ctx, 1);
  X86_CALL(ctx, 1, chain_rbp_two,
           SET(rbx, 0xa5a5000000000103) SET(r12, 0xa5a500000000010c)
           SET(r13, 0xa5a500000000010d) SET(r14, 0xa5a500000000010e)
           SET(r15, 0xa5a500000000010f),
           "rbx", "r12", "r13", "r14", "r15");
  chain_keep(local);
  return local[1];
}

/* 2: RBP_FRAME saving two registers. */
__attribute__((noinline)) u64 chain_rbp_two(u64 *ctx) {
  volatile u64 local[2] = {5, 6};
  RECORD_RA(ctx, 2);
  X86_CALL(ctx, 2, chain_immd_a,
           SET(r12, 0xa5a500000000020c) SET(r15, 0xa5a500000000020f),
           "r12", "r15");
  chain_keep(local);
  return local[0];
}
