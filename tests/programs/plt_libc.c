// A crash inside libc, in a function reached through the PLT (strlen of a null pointer).
#include <string.h>

#define NOINLINE __attribute__((noinline))

const char *volatile text;  // null

NOINLINE size_t measure(void) { return strlen(text) + 1; }  // SIGSEGV inside strlen

NOINLINE size_t caller(int n) { return measure() * (size_t)n; }

int main(int argc, char **argv) {
  (void)argv;
  return (int)caller(argc);
}
