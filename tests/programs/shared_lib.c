// Calls into our shared library (crashlib.c) through the PLT; the crash is inside the library.
#define NOINLINE __attribute__((noinline))

int crashlib_entry(int v);

NOINLINE int call_lib(int v) { return crashlib_entry(v + 5) + 2; }

int main(int argc, char **argv) {
  (void)argv;
  return call_lib(argc);
}
