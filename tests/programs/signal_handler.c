// A fault in a frameless leaf is caught by a SIGSEGV handler, which faults again inside a
// function it calls; SIGSEGV is blocked in the handler, so the kernel kills the process there.
// The stack holds the handler, the kernel's signal frame (libc's restorer) and the first fault.
#include <signal.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

volatile int *volatile target;

NOINLINE static void handler_work(int sig) { *target = sig; }  // second SIGSEGV: core

static void on_segv(int sig, siginfo_t *info, void *uctx) {
  (void)info;
  (void)uctx;
  handler_work(sig);
}

NOINLINE int first_fault(int v) {
  *target = v;  // first SIGSEGV: runs on_segv
  return v;
}

NOINLINE int before_fault(int v) { return first_fault(v + 1) + 1; }

int main(int argc, char **argv) {
  (void)argv;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, 0);
  return before_fault(argc);
}
