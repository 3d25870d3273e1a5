# Frames gcc does not write but gas 2.47 describes in SFrame v3, for test_sframe_corpus.py:
# a CFA based on another register and an RA in a register (flexible FDEs), a signal
# trampoline (the signal bit) and an outermost frame (RA undefined). Never run.
	.text
	.globl	cfa_in_r12
	.type	cfa_in_r12, @function
cfa_in_r12:
	.cfi_startproc
	mov	%rsp, %r12
	.cfi_def_cfa_register %r12
	nop
	.cfi_def_cfa_register %rsp
	ret
	.cfi_endproc
	.size	cfa_in_r12, .-cfa_in_r12

	.globl	ra_in_r11
	.type	ra_in_r11, @function
ra_in_r11:
	.cfi_startproc
	pop	%r11
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %r11
	jmp	*%r11
	.cfi_endproc
	.size	ra_in_r11, .-ra_in_r11

	nop	# a signal trampoline's CFI starts a byte before it
	.globl	signal_tramp
	.type	signal_tramp, @function
signal_tramp:
	.cfi_startproc
	.cfi_signal_frame
	.cfi_def_cfa_offset 16
	nop
	ret
	.cfi_endproc
	.size	signal_tramp, .-signal_tramp

	.globl	outermost
	.type	outermost, @function
outermost:
	.cfi_startproc
	.cfi_undefined %rip
	xor	%ebp, %ebp
	hlt
	.cfi_endproc
	.size	outermost, .-outermost
	.section	.note.GNU-stack,"",@progbits
