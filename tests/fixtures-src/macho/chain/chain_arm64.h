/* The arm64 call sequence shared by chain_arm64_fp.c and chain_arm64_nofp.c. */
#ifndef UNWINDKIT_CHAIN_ARM64_H
#define UNWINDKIT_CHAIN_ARM64_H

#include "chain.h"

typedef unsigned long u64;

void chain_keep(volatile u64 *p);

/* Loads a known value (tag in the low 16 bits) into x<n> or d<n>; x9 is scratch. */
#define SETX(n, tag) "movz x" #n ", #" #tag "\n\tmovk x" #n ", #0xa5a5, lsl #48\n\t"
#define SETD(n, tag) "movz x9, #" #tag "\n\tmovk x9, #0xd8d8, lsl #48\n\tfmov d" #n ", x9\n\t"

/* Runs `sets`, stores x19-x28, fp, sp, the return address and d8-d15 into record `idx` with
   the instructions that make the call, then calls `next` with ctx in x0. The registers
   `sets` writes are named in the variadic clobbers, so the prologue saves them (in pairs)
   and compact unwind has to say where. */
#define A64_CALL(ctx, idx, next, sets, ...)                                                \
  do {                                                                                     \
    register u64 *c_ __asm__("x0") = (ctx);                                                \
    register u64 *r_ __asm__("x1") = (ctx) + CHAIN_REC(idx);                               \
    __asm__ volatile(sets                                                                  \
                     "stp x19, x20, [x1, #0]\n\t"                                          \
                     "stp x21, x22, [x1, #16]\n\t"                                         \
                     "stp x23, x24, [x1, #32]\n\t"                                         \
                     "stp x25, x26, [x1, #48]\n\t"                                         \
                     "stp x27, x28, [x1, #64]\n\t"                                         \
                     "str x29, [x1, #80]\n\t"                                              \
                     "mov x9, sp\n\t"                                                      \
                     "str x9, [x1, #88]\n\t"                                               \
                     "adr x9, 1f\n\t"                                                      \
                     "str x9, [x1, #96]\n\t"                                               \
                     "stp d8, d9, [x1, #112]\n\t"                                          \
                     "stp d10, d11, [x1, #128]\n\t"                                        \
                     "stp d12, d13, [x1, #144]\n\t"                                        \
                     "stp d14, d15, [x1, #160]\n\t"                                        \
                     "bl _" #next "\n"                                                     \
                     "1:"                                                                  \
                     : "+r"(c_), "+r"(r_)                                                  \
                     :                                                                     \
                     : "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",       \
                       "x12", "x13", "x14", "x15", "x16", "x17", "x30", "v0", "v1", "v2",  \
                       "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20",    \
                       "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29",      \
                       "v30", "v31", "memory", "cc", ##__VA_ARGS__);                       \
  } while (0)

#define RECORD_RA(ctx, idx) \
  ((ctx)[CHAIN_REC(idx) + A64_REC_RA] = (u64)__builtin_return_address(0))

#endif
