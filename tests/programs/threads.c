// Five threads, each stopped in a different state when one of them faults:
// a deep call chain in nanosleep, a frameless leaf spinning, a blocking read on a pipe,
// the main thread in pthread_join, and the faulting thread.
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile int *volatile target;
static atomic_int ready;
static int pipe_fds[2];

NOINLINE static void sleep_bottom(void) {
  struct timespec ts = {1000, 0};
  atomic_fetch_add(&ready, 1);
  nanosleep(&ts, 0);
}
NOINLINE static void sleep_middle(int n) {
  char pad[64];
  KEEP(pad);
  if (n > 0) sleep_middle(n - 1); else sleep_bottom();
  KEEP(pad);
}
static void *sleeper(void *arg) { sleep_middle(5); return arg; }

// A one-instruction loop: the thread's PC is the same in every run (the truth harness
// compares two runs of the program).
NOINLINE static void spin_leaf(void) {
  atomic_fetch_add(&ready, 1);
#if defined(__x86_64__)
  __asm__ volatile("1: jmp 1b");
#elif defined(__aarch64__)
  __asm__ volatile("1: b 1b");
#else
  for (;;) {}
#endif
}
static void *spinner(void *arg) { spin_leaf(); return arg; }

NOINLINE static void read_blocked(void) {
  char c;
  atomic_fetch_add(&ready, 1);
  if (read(pipe_fds[0], &c, 1) == 1) KEEP(&c);
}
static void *reader(void *arg) { read_blocked(); return arg; }

NOINLINE static void fault_now(int v) { *target = v; }  // SIGSEGV
static void *crasher(void *arg) {
  while (atomic_load(&ready) < 3) usleep(1000);
  usleep(100000);  // let the other threads reach their blocking calls
  fault_now(7);
  return arg;
}

int main(void) {
  pthread_t t[4];
  if (pipe(pipe_fds) != 0) return 1;
  pthread_create(&t[0], 0, sleeper, 0);
  pthread_create(&t[1], 0, spinner, 0);
  pthread_create(&t[2], 0, reader, 0);
  pthread_create(&t[3], 0, crasher, 0);
  pthread_join(t[3], 0);
  return 0;
}
