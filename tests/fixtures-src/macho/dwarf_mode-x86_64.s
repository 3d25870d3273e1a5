# A function whose frame compact unwind cannot describe, so clang encodes it as DWARF mode and
# emits an __eh_frame FDE: the CFA is based on rbx (compact unwind knows only rbp frames).
	.text
	.globl	_odd_frame
	.p2align	4
_odd_frame:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	movq	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	subq	$32, %rsp
	callq	_leaf
	movq	%rbx, %rsp
	popq	%rbx
	retq
	.cfi_endproc

	.globl	_leaf
	.p2align	4
_leaf:
	.cfi_startproc
	xorl	%eax, %eax
	retq
	.cfi_endproc

	.globl	_main
	.p2align	4
_main:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	callq	_odd_frame
	popq	%rbp
	retq
	.cfi_endproc
.subsections_via_symbols
