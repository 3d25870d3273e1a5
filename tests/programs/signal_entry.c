// A fault at the very first byte of a function, caught by a SIGSEGV handler that faults again
// (the core). The function just before it in memory ends with a call to a noreturn function,
// with a larger CFA there: a caller above the signal frame that was looked up at pc - 1, as
// a return address would be, would get that function's rule and a wrong caller. Only an
// unwinder that knows the frame above a signal frame was interrupted at its pc walks through.
// x86_64 only (the two functions are written in assembly, with CFI directives that gas also
// turns into SFrame).
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

volatile int *volatile target;

int fault_at_entry(int v);

__asm__(
    ".text\n"
    ".globl before_entry\n"
    ".type before_entry, @function\n"
    "before_entry:\n"
    "  .cfi_startproc\n"
    "  subq $24, %rsp\n"
    "  .cfi_def_cfa_offset 32\n"
    "  call abort\n"
    "  .cfi_endproc\n"
    ".size before_entry, .-before_entry\n"
    ".globl fault_at_entry\n"
    ".type fault_at_entry, @function\n"
    "fault_at_entry:\n"
    "  .cfi_startproc\n"
    "  movl %edi, 0\n"  // SIGSEGV before anything else runs
    "  movl %edi, %eax\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size fault_at_entry, .-fault_at_entry\n");

NOINLINE static void handler_work(int sig) { *target = sig; }  // second SIGSEGV: core

static void on_segv(int sig, siginfo_t *info, void *uctx) {
  (void)info;
  (void)uctx;
  handler_work(sig);
}

NOINLINE int calls_fault(int v) { return fault_at_entry(v + 1) + 1; }

int main(int argc, char **argv) {
  (void)argv;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, 0);
  return calls_fault(argc);
}
