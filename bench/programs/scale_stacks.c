// Stacks for scripts/bench's scale cases: THREADS threads (the main one included), each
// DEPTH_MIN..DEPTH_MAX levels of its own functions deep (two frames a level), libc's qsort
// every LIBC_EVERY levels (its comparator goes on down, so libc frames sit between ours), the
// workers parked in a blocking read, and the main thread faulting at its deepest frame.
// Depths depend on the thread's index alone, so every run has the same frames.
// bench/scale_cases.py builds it three ways for scripts/bench: a 3,000-frame recursion, a
// core of 3 threads of about 24 frames, and one of 1,000 threads of 20 to 40 frames.
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile int *volatile target;
static atomic_int ready;
static int pipe_fds[2];

#ifndef LIBC_EVERY
#define LIBC_EVERY 8
#endif

struct walk {
  int left;  // frames still to make
  int worker;
};

static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;
static void descend(struct walk *w);

NOINLINE static void park(struct walk *w) {
  pthread_mutex_unlock(&one_at_a_time);
  if (!w->worker) {
    while (atomic_load(&ready) < THREADS - 1) usleep(1000);
    usleep(200000);  // let the workers reach their read
    *target = 1;     // SIGSEGV: the core
  }
  char c;
  atomic_fetch_add(&ready, 1);
  if (read(pipe_fds[0], &c, 1) == 1) KEEP(&c);
}

#if LIBC_EVERY
// qsort of two elements calls the comparator once; it carries the walk on from inside libc.
static struct walk *through_libc;
static int compare(const void *a, const void *b) {
  descend(through_libc);
  return *(const int *)a - *(const int *)b;
}
#endif

// Two shapes of frame: a frameless-style one keeping a buffer, and one keeping a value
// across the call in a callee-saved register.
NOINLINE static void level_a(struct walk *w) {
  char local[16];
  KEEP(local);
  descend(w);
  KEEP(local);
}
NOINLINE static int level_b(struct walk *w, int v) {
  descend(w);
  KEEP(&v);
  return v * 3;
}

// KEEP(w) after each call: no tail calls, every level keeps its frame.
NOINLINE static void descend(struct walk *w) {
  if (w->left-- <= 0) {
    park(w);
#if LIBC_EVERY
  } else if (w->left % LIBC_EVERY == 0) {
    int pair[2] = {2, 1};
    through_libc = w;  // one thread at a time walks down: see walk_down()
    qsort(pair, 2, sizeof pair[0], compare);
#endif
  } else if (w->left & 1) {
    level_a(w);
  } else {
    KEEP((long)level_b(w, w->left));
  }
  KEEP(w);
}

// Threads take turns down to their park (which unlocks), so through_libc is never shared.
static void walk_down(int levels, int worker) {
  struct walk w = {levels, worker};
  pthread_mutex_lock(&one_at_a_time);
  descend(&w);
}
static void *worker(void *arg) {
  walk_down((int)(long)arg, 1);
  return 0;
}

int main(void) {
  if (pipe(pipe_fds) != 0) return 1;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);  // 1,000 threads: a small core
  for (int i = 1; i < THREADS; ++i) {
    pthread_t t;
    long depth = DEPTH_MIN + (i * 7) % (DEPTH_MAX - DEPTH_MIN + 1);
    if (pthread_create(&t, &attr, worker, (void *)depth) != 0) return 2;
  }
  walk_down(DEPTH_MAX, 0);
  return 0;
}
