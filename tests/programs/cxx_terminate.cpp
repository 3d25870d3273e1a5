// An exception is in flight when a destructor run by its unwinding throws again: the
// destructor is noexcept, so std::terminate runs and aborts with both exceptions live.
#include <stdexcept>

#define NOINLINE __attribute__((noinline))

struct Guard {
  int n;
  ~Guard() noexcept(false) {
    if (n > 0) throw std::logic_error("thrown by ~Guard during unwinding");
  }
};

NOINLINE void thrower(int n) {
  Guard g{n};
  throw std::runtime_error("first exception");
}

NOINLINE int catcher(int n) {
  try {
    thrower(n);
  } catch (const std::exception&) {
    return 1;
  }
  return 0;
}

int main(int argc, char**) { return catcher(argc); }
