/* Layout of the context the runner hands to the chain (tests/fixtures-src/macho/chain/).
   Shared by the Mach-O fixture functions, the Linux runner that maps and calls them, and the
   checker that unwinds the recorded state. Everything is 64-bit words.

   ctx[0]             index of the innermost function (the leaf that traps)
   record i           ctx + CHAIN_REC(i): what function i (0 = the runner) saw at its call
                      into function i + 1, written by the call sequence's own instructions,
                      plus __builtin_return_address(0) of function i. */
#ifndef UNWINDKIT_CHAIN_H
#define UNWINDKIT_CHAIN_H

#define CHAIN_REC_WORDS 32
#define CHAIN_MAX 16
#define CHAIN_CTX_WORDS (CHAIN_REC_WORDS * (CHAIN_MAX + 1))
#define CHAIN_REC(i) (CHAIN_REC_WORDS * ((i) + 1))

/* x86_64 record words (byte offsets are 8x, spelled out in the call sequence). */
#define X86_REC_RBX 0
#define X86_REC_RBP 1
#define X86_REC_R12 2
#define X86_REC_R13 3
#define X86_REC_R14 4
#define X86_REC_R15 5
#define X86_REC_RSP 6   /* rsp just before `call`: the callee's CFA */
#define X86_REC_RET 7   /* the address after `call`: the callee's return address */
#define X86_REC_RA 8    /* __builtin_return_address(0) of this function */

/* arm64 record words. */
#define A64_REC_X19 0   /* x19..x28 at 0..9 */
#define A64_REC_FP 10
#define A64_REC_SP 11   /* sp at `bl`: the callee's CFA */
#define A64_REC_RET 12  /* the address after `bl` */
#define A64_REC_RA 13   /* __builtin_return_address(0) of this function */
#define A64_REC_D8 14   /* d8..d15 at 14..21 */

#endif
