// Frames gcc does not write but gas 2.47 describes in SFrame v3, for test_sframe_corpus.py: a
// signal trampoline (the signal bit) and an outermost frame (RA undefined). (gas 2.47 writes
// no flexible FDE for AArch64: a CFA on x9 or an RA or FP in a register gets no FDE at all.)
// Never run.
	.text
	nop
	.globl	signal_tramp
	.type	signal_tramp, %function
signal_tramp:
	.cfi_startproc
	.cfi_signal_frame
	nop
	ret
	.cfi_endproc
	.size	signal_tramp, .-signal_tramp

	.globl	outermost
	.type	outermost, %function
outermost:
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, #0
	brk	#0
	.cfi_endproc
	.size	outermost, .-outermost
	.section	.note.GNU-stack,"",@progbits
