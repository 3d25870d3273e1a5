/* x86_64 chain, DWARF-mode function. It saves the registers it owns with `mov` into slots
   of its frame, not with pushes below the return address, which no compact-unwind mode
   describes; its CFI says so with .cfi_adjust_cfa_offset/.cfi_rel_offset (as hand-written
   assembly does), for which the assembler emits a DWARF-mode encoding and an __eh_frame FDE.
   clang compiles no such frame from C, hence assembly. The CFA stays rsp-based, so the
   stepper trusts it in a middle frame. It follows the chain's protocol like X86_CALL
   (chain_x86_64.h): loads known values into the registers it owns (rbx, r13, r14), records
   every callee-saved register, rsp, the return address of its call and its own return
   address, and calls the next function with ctx in rdi. */
#include "chain.h"

#define REC 5  /* its place in the chain */
#define AT(word) ((CHAIN_REC(REC) + (word)) * 8)

	.text
	.globl	_chain_dwarf
	.p2align	4
_chain_dwarf:
	.cfi_startproc
	subq	$56, %rsp               /* keeps rsp 16-byte aligned at the call */
	.cfi_adjust_cfa_offset 56
	movq	%rbx, 8(%rsp)
	.cfi_rel_offset %rbx, 8
	movq	%r13, 16(%rsp)
	.cfi_rel_offset %r13, 16
	movq	%r14, 32(%rsp)
	.cfi_rel_offset %r14, 32
	movq	56(%rsp), %rax          /* its return address (__builtin_return_address(0)) */
	movq	%rax, AT(X86_REC_RA)(%rdi)
	movabsq	$0xa5a5000000000503, %rbx
	movabsq	$0xa5a500000000050d, %r13
	movabsq	$0xa5a500000000050e, %r14
	leaq	AT(0)(%rdi), %rsi
	movq	%rbx, 0(%rsi)
	movq	%rbp, 8(%rsi)
	movq	%r12, 16(%rsi)
	movq	%r13, 24(%rsi)
	movq	%r14, 32(%rsi)
	movq	%r15, 40(%rsi)
	movq	%rsp, 48(%rsi)
	leaq	1f(%rip), %rax
	movq	%rax, 56(%rsi)
	callq	_chain_immd_b
1:
	movq	8(%rsp), %rbx
	movq	16(%rsp), %r13
	movq	32(%rsp), %r14
	addq	$56, %rsp
	retq
	.cfi_endproc

.subsections_via_symbols
