/* The x86_64 call sequence shared by chain_x86_64_fp.c and chain_x86_64_nofp.c. */
#ifndef UNWINDKIT_CHAIN_X86_64_H
#define UNWINDKIT_CHAIN_X86_64_H

#include "chain.h"

typedef unsigned long u64;

void chain_keep(volatile u64 *p);

/* Loads a known value into a callee-saved register. */
#define SET(reg, value) "movabsq $" #value ", %%" #reg "\n\t"

/* Runs `sets`, stores every callee-saved register, rsp and the return address into record
   `idx` with the instructions that make the call, then calls `next` with ctx in rdi. The
   registers `sets` writes are named in the variadic clobbers, so the prologue saves them and
   compact unwind has to say where. The call is in assembly so that nothing the compiler emits
   can sit between the recording and the call. */
#define X86_CALL(ctx, idx, next, sets, ...)                                                \
  do {                                                                                     \
    register u64 *c_ __asm__("rdi") = (ctx);                                               \
    register u64 *r_ __asm__("rsi") = (ctx) + CHAIN_REC(idx);                              \
    __asm__ volatile(sets                                                                  \
                     "movq %%rbx, 0(%%rsi)\n\t"                                            \
                     "movq %%rbp, 8(%%rsi)\n\t"                                            \
                     "movq %%r12, 16(%%rsi)\n\t"                                           \
                     "movq %%r13, 24(%%rsi)\n\t"                                           \
                     "movq %%r14, 32(%%rsi)\n\t"                                           \
                     "movq %%r15, 40(%%rsi)\n\t"                                           \
                     "movq %%rsp, 48(%%rsi)\n\t"                                           \
                     "leaq 1f(%%rip), %%rax\n\t"                                           \
                     "movq %%rax, 56(%%rsi)\n\t"                                           \
                     "call _" #next "\n"                                                   \
                     "1:"                                                                  \
                     : "+r"(c_), "+r"(r_)                                                  \
                     :                                                                     \
                     : "rax", "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc",      \
                       "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",     \
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",        \
                       "xmm15", ##__VA_ARGS__);                                            \
  } while (0)

#define RECORD_RA(ctx, idx) \
  ((ctx)[CHAIN_REC(idx) + X86_REC_RA] = (u64)__builtin_return_address(0))

#endif
