# notes §3's 199-byte .trace module (tests/unit/trace_vectors.h, LLVM's
# traceback-dump-complete.s) as a compiler leaves it in an object: every address (the HDR's
# base PC, each RTN64's start PC) a symbol reference that gas turns into an R_X86_64_64
# relocation, the field itself 0. test_trace_object.py reads it as readelf applies them.
	.text
	.globl	main
main:
	.fill	0x30, 1, 0x90
subr1:
	.fill	0x40, 1, 0x90
	.globl	subr2
subr2:
	.fill	0x1e, 1, 0x90

	.section	.trace,"a",@progbits
	.p2align	3
	.byte	0x0a		# HDR
	.short	2
	.byte	0
	.long	199
	.quad	main
	.long	2		# files
	.long	0x8e		# code length
	.short	0		# no module name
	.short	22
	.ascii	"traceback-complete_a.c"
	.short	22
	.ascii	"traceback-complete_b.c"
	.p2align	3
	.byte	0x0c, 0		# RTN64 main
	.short	4
	.quad	main
	.ascii	"main"
	.byte	0x04, 0x06, 0x09, 0x0e, 0, 0, 0, 0x04, 0x01, 0x09, 0x11, 0, 0, 0
	.p2align	3
	.byte	0x0c, 0		# RTN64 subr1 (.text + 0x30)
	.short	5
	.quad	subr1
	.ascii	"subr1"
	.byte	0x04, 0x03, 0x09, 0x0a, 0, 0, 0, 0x04, 0x01, 0x09, 0x0e, 0, 0, 0
	.byte	0x04, 0x01, 0x09, 0x0d, 0, 0, 0, 0x04, 0x01, 0x09, 0x08, 0, 0, 0
	.byte	0x03, 0x01, 0, 0, 0
	.p2align	3
	.byte	0x0c, 0		# RTN64 subr2 (its own symbol)
	.short	5
	.quad	subr2
	.ascii	"subr2"
	.byte	0x04, 0xf7, 0x09, 0x0a, 0, 0, 0, 0x04, 0x01, 0x09, 0x12, 0, 0, 0
	.section	.note.GNU-stack,"",@progbits
