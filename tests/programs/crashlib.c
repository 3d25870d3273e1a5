// Our shared library (libcrashlib.so, built -fPIC -shared with SFrame): the crash happens in
// its frameless inner function, reached from the program through the PLT.
#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

volatile int *volatile crashlib_target;

NOINLINE static int lib_inner(int v) {
  *crashlib_target = v;  // SIGSEGV
  return v;
}

NOINLINE static int lib_middle(int v) {
  int pad[12];
  KEEP(pad);
  return lib_inner(v + 1) + pad[v & 7];
}

int crashlib_entry(int v) { return lib_middle(v * 2) + 1; }
