// C++ exceptions: a personality routine and LSDAs in __unwind_info. No headers.
struct Guard {
  int* p;
  ~Guard() { ++*p; }
};

__attribute__((noinline)) int thrower(int x) {
  if (x > 2) throw x;
  return x;
}

__attribute__((noinline)) int catcher(int x) {
  try {
    return thrower(x);
  } catch (int e) {
    return -e;
  }
}

__attribute__((noinline)) int cleanup(int x) {
  int count = 0;
  Guard g{&count};
  return thrower(x) + count;
}

int main() { return catcher(3) + cleanup(1); }
