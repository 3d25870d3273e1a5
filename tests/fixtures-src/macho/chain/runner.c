/* Runs a Mach-O chain (chain_*.c) on Linux: maps the image's segments at their addresses,
   calls the entry function with every callee-saved register set to a known value, and
   records, from a signal handler, the registers and stack at the leaf's trap. Built at test
   time for x86_64 (gcc) and AArch64 (aarch64-linux-gnu-gcc, run under qemu-aarch64); the
   plain-C fixture code makes no system calls and the calling conventions agree.

   usage: runner IMAGE ENTRY_ADDRESS_HEX > state.txt

   Output (read by tests/tools/compact_unwind_run_check.cpp), one item a line, hex values:
     arch x86_64|arm64
     pc V              the leaf's pc at the trap
     reg N V           its registers by DWARF number
     depth N           index of the leaf in the chain
     rec I W0 .. W31   record I (chain.h)
     stack BASE SIZE   then SIZE/8 lines of one word each, from BASE up */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "chain.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

typedef uint64_t u64;

static u64 ctx[CHAIN_CTX_WORDS];
static u64 stack_top;  /* the runner's frame: the stack copy ends here */

#define MAX_STACK (1u << 20)
static unsigned char stack_copy[MAX_STACK];
static struct {
  int trapped;
  u64 pc, sp, stack_size;
  u64 regs[128];
  unsigned char known[128];
} trap;

static int fail(const char *what) {
  fprintf(stderr, "runner: %s\n", what);
  return 1;
}

static u64 rd32(const unsigned char *p) { u64 v = 0; memcpy(&v, p, 4); return v; }
static u64 rd64(const unsigned char *p) { u64 v; memcpy(&v, p, 8); return v; }

/* Maps every LC_SEGMENT_64 with an address and access (not __PAGEZERO) at its vmaddr. The
   fixture has no rebases or binds (the test checks), so its bytes run where they are. */
static int map_image(const unsigned char *img, size_t size) {
  if (size < 32 || rd32(img) != 0xfeedfacf) return fail("not a 64-bit little-endian Mach-O");
  const u64 ncmds = rd32(img + 16), sizeofcmds = rd32(img + 20);
  if (32 + sizeofcmds > size) return fail("load commands run past the file");
  const long page = sysconf(_SC_PAGESIZE);
  size_t at = 32;
  for (u64 i = 0; i < ncmds; ++i) {
    if (at + 8 > 32 + sizeofcmds) return fail("load command runs past sizeofcmds");
    const u64 cmd = rd32(img + at), cmdsize = rd32(img + at + 4);
    if (cmdsize < 8 || at + cmdsize > 32 + sizeofcmds) return fail("bad cmdsize");
    if (cmd == 0x19 /* LC_SEGMENT_64 */) {
      if (cmdsize < 72) return fail("short LC_SEGMENT_64");
      const unsigned char *s = img + at;
      const u64 vmaddr = rd64(s + 24), vmsize = rd64(s + 32), fileoff = rd64(s + 40),
                filesize = rd64(s + 48), initprot = rd32(s + 60);
      if (vmsize != 0 && initprot != 0) {
        if (fileoff > size || filesize > size - fileoff || filesize > vmsize)
          return fail("segment outside the file");
        const u64 len = (vmsize + page - 1) & ~(u64)(page - 1);
        void *m = mmap((void *)vmaddr, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (m == MAP_FAILED || (u64)m != vmaddr) return fail("cannot map a segment at its vmaddr");
        memcpy(m, img + fileoff, filesize);
        /* VM_PROT_READ/WRITE/EXECUTE have the values of PROT_READ/WRITE/EXEC. */
        if (mprotect(m, len, (int)(initprot & 7)) != 0) return fail("mprotect");
        __builtin___clear_cache((char *)m, (char *)m + len);
      }
    }
    at += cmdsize;
  }
  return 0;
}

static void set_reg(unsigned n, u64 v) {
  trap.regs[n] = v;
  trap.known[n] = 1;
}

/* Records the trapping leaf's registers and the stack from its sp to the runner's frame,
   then steps over the trap instruction. */
static void on_trap(int sig, siginfo_t *si, void *uv) {
  (void)sig;
  (void)si;
  ucontext_t *uc = uv;
#if defined(__x86_64__)
  static const int dwarf_to_greg[16] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
                                        REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                        REG_R12, REG_R13, REG_R14, REG_R15};
  for (unsigned n = 0; n < 16; ++n) set_reg(n, (u64)uc->uc_mcontext.gregs[dwarf_to_greg[n]]);
  trap.pc = (u64)uc->uc_mcontext.gregs[REG_RIP];
  trap.sp = (u64)uc->uc_mcontext.gregs[REG_RSP];
  uc->uc_mcontext.gregs[REG_RIP] += 2; /* ud2 */
#elif defined(__aarch64__)
  for (unsigned n = 0; n < 31; ++n) set_reg(n, uc->uc_mcontext.regs[n]);
  set_reg(31, uc->uc_mcontext.sp);
  trap.pc = uc->uc_mcontext.pc;
  trap.sp = uc->uc_mcontext.sp;
  /* d8-d15 are the low halves of v8-v15 in the FPSIMD record of the signal frame. */
  for (size_t off = 0; off + 8 <= sizeof uc->uc_mcontext.__reserved;) {
    struct _aarch64_ctx *h = (struct _aarch64_ctx *)(uc->uc_mcontext.__reserved + off);
    if (h->magic == 0 || h->size == 0) break;
    if (h->magic == FPSIMD_MAGIC &&
        off + sizeof(struct fpsimd_context) <= sizeof uc->uc_mcontext.__reserved) {
      const struct fpsimd_context *f = (const struct fpsimd_context *)h;
      for (unsigned n = 8; n < 16; ++n) set_reg(64 + n, (u64)f->vregs[n]);
    }
    off += h->size;
  }
  uc->uc_mcontext.pc += 4; /* brk */
#else
#error "runner: x86_64 or AArch64 only"
#endif
  if (trap.sp < stack_top && stack_top - trap.sp <= MAX_STACK) {
    trap.stack_size = stack_top - trap.sp;
    memcpy(stack_copy, (const void *)trap.sp, trap.stack_size);
  }
  trap.trapped = 1;
}

/* Calls the entry with every callee-saved register (but the frame pointer) set to a known
   value and recorded in record 0, exactly as the chain's own call sequences do. */
__attribute__((noinline)) static void call_entry(u64 entry) {
#if defined(__x86_64__)
  register u64 *c_ __asm__("rdi") = ctx;
  register u64 *r_ __asm__("rsi") = ctx + CHAIN_REC(0);
  register u64 f_ __asm__("r11") = entry;
  __asm__ volatile(
      "movabsq $0xa5a5000000000003, %%rbx\n\t"
      "movabsq $0xa5a500000000000c, %%r12\n\t"
      "movabsq $0xa5a500000000000d, %%r13\n\t"
      "movabsq $0xa5a500000000000e, %%r14\n\t"
      "movabsq $0xa5a500000000000f, %%r15\n\t"
      "movq %%rbx, 0(%%rsi)\n\t"
      "movq %%rbp, 8(%%rsi)\n\t"
      "movq %%r12, 16(%%rsi)\n\t"
      "movq %%r13, 24(%%rsi)\n\t"
      "movq %%r14, 32(%%rsi)\n\t"
      "movq %%r15, 40(%%rsi)\n\t"
      "movq %%rsp, 48(%%rsi)\n\t"
      "leaq 1f(%%rip), %%rax\n\t"
      "movq %%rax, 56(%%rsi)\n\t"
      "call *%%r11\n"
      "1:"
      : "+r"(c_), "+r"(r_), "+r"(f_)
      :
      : "rax", "rcx", "rdx", "r8", "r9", "r10", "rbx", "r12", "r13", "r14", "r15", "memory",
        "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#elif defined(__aarch64__)
  register u64 *c_ __asm__("x0") = ctx;
  register u64 *r_ __asm__("x1") = ctx + CHAIN_REC(0);
  register u64 f_ __asm__("x16") = entry;
#define SETX(n) "movz x" #n ", #" #n "\n\tmovk x" #n ", #0xa5a5, lsl #48\n\t"
#define SETD(n) "movz x9, #" #n "\n\tmovk x9, #0xd8d8, lsl #48\n\tfmov d" #n ", x9\n\t"
  __asm__ volatile(
      SETX(19) SETX(20) SETX(21) SETX(22) SETX(23) SETX(24) SETX(25) SETX(26) SETX(27) SETX(28)
      SETD(8) SETD(9) SETD(10) SETD(11) SETD(12) SETD(13) SETD(14) SETD(15)
      "stp x19, x20, [x1, #0]\n\t"
      "stp x21, x22, [x1, #16]\n\t"
      "stp x23, x24, [x1, #32]\n\t"
      "stp x25, x26, [x1, #48]\n\t"
      "stp x27, x28, [x1, #64]\n\t"
      "str x29, [x1, #80]\n\t"
      "mov x9, sp\n\t"
      "str x9, [x1, #88]\n\t"
      "adr x9, 1f\n\t"
      "str x9, [x1, #96]\n\t"
      "stp d8, d9, [x1, #112]\n\t"
      "stp d10, d11, [x1, #128]\n\t"
      "stp d12, d13, [x1, #144]\n\t"
      "stp d14, d15, [x1, #160]\n\t"
      "blr x16\n"
      "1:"
      : "+r"(c_), "+r"(r_), "+r"(f_)
      :
      : "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14",
        "x15", "x17", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
        "x30", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12",
        "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24",
        "v25", "v26", "v27", "v28", "v29", "v30", "v31", "memory", "cc");
#endif
}

int main(int argc, char **argv) {
  volatile u64 frame_marker = 0;
  if (argc != 3) return fail("usage: runner IMAGE ENTRY_ADDRESS_HEX");
  FILE *f = fopen(argv[1], "rb");
  if (!f) return fail("cannot open the image");
  static unsigned char img[1 << 22];
  const size_t size = fread(img, 1, sizeof img, f);
  fclose(f);
  if (size == sizeof img) return fail("image too big");
  if (map_image(img, size) != 0) return 1;

  static char altstack[1 << 16];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_trap;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGILL, &sa, NULL) != 0 ||
      sigaction(SIGTRAP, &sa, NULL) != 0)
    return fail("cannot install the trap handler");

  /* Everything the chain pushes lies below this frame's locals. */
  stack_top = ((u64)&frame_marker + 8) & ~(u64)7;
  call_entry(strtoull(argv[2], NULL, 16));
  if (!trap.trapped) return fail("the chain returned without trapping");
  if (trap.stack_size == 0) return fail("stack copy failed");

#if defined(__x86_64__)
  printf("arch x86_64\n");
#else
  printf("arch arm64\n");
#endif
  printf("pc %llx\n", (unsigned long long)trap.pc);
  for (unsigned n = 0; n < 128; ++n)
    if (trap.known[n]) printf("reg %u %llx\n", n, (unsigned long long)trap.regs[n]);
  printf("depth %llu\n", (unsigned long long)ctx[0]);
  for (u64 i = 0; i <= ctx[0] && i < CHAIN_MAX; ++i) {
    printf("rec %llu", (unsigned long long)i);
    for (unsigned w = 0; w < CHAIN_REC_WORDS; ++w)
      printf(" %llx", (unsigned long long)ctx[CHAIN_REC(i) + w]);
    printf("\n");
  }
  printf("stack %llx %llx\n", (unsigned long long)trap.sp, (unsigned long long)trap.stack_size);
  for (u64 at = 0; at + 8 <= trap.stack_size; at += 8)
    printf("%llx\n", (unsigned long long)rd64(stack_copy + at));
  return 0;
}
