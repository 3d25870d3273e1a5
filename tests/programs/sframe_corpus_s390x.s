# Frames for test_sframe_corpus.py that gas 2.47 describes in SFrame v3: RA and FP kept in
# FPRs over a 168-byte frame (a flexible FDE whose CFA offset is stored as (offset - 160) / 8),
# a signal trampoline (the signal bit) and an outermost frame (RA undefined). Never run.
	.text
	.globl	ra_in_f0
	.type	ra_in_f0, @function
ra_in_f0:
	.cfi_startproc
	ldgr	%f0,%r14
	.cfi_register 14, 16
	ldgr	%f2,%r11
	.cfi_register 11, 17
	aghi	%r15,-168
	.cfi_adjust_cfa_offset 168
	nopr
	aghi	%r15,168
	.cfi_adjust_cfa_offset -168
	lgdr	%r14,%f0
	lgdr	%r11,%f2
	br	%r14
	.cfi_endproc
	.size	ra_in_f0, .-ra_in_f0

	nopr
	.globl	signal_tramp
	.type	signal_tramp, @function
signal_tramp:
	.cfi_startproc
	.cfi_signal_frame
	nopr
	br	%r14
	.cfi_endproc
	.size	signal_tramp, .-signal_tramp

	.globl	outermost
	.type	outermost, @function
outermost:
	.cfi_startproc
	.cfi_undefined 14
	lghi	%r11,0
	.long	0
	.cfi_endproc
	.size	outermost, .-outermost
	.section	.note.GNU-stack,"",@progbits
