// A function whose frame compact unwind cannot describe, so clang encodes it as DWARF mode and
// emits an __eh_frame FDE: x19 is saved alone (compact unwind saves register pairs only).
	.text
	.globl	_odd_frame
	.p2align	2
_odd_frame:
	.cfi_startproc
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset w30, -24
	.cfi_offset w29, -32
	str	x19, [sp, #16]
	.cfi_offset w19, -16
	mov	x29, sp
	.cfi_def_cfa w29, 32
	bl	_leaf
	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	ret
	.cfi_endproc

	.globl	_leaf
	.p2align	2
_leaf:
	.cfi_startproc
	mov	w0, #0
	ret
	.cfi_endproc

	.globl	_main
	.p2align	2
_main:
	.cfi_startproc
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	mov	x29, sp
	.cfi_def_cfa w29, 16
	.cfi_offset w30, -8
	.cfi_offset w29, -16
	bl	_odd_frame
	ldp	x29, x30, [sp], #16
	ret
	.cfi_endproc
.subsections_via_symbols
