// Heap taken by our tables for one SFrame section: what sframe::Index::build allocates (the
// plugins' per-module table; it reads rows from the section's bytes, which the module's file
// already holds), at its peak and once built, against the section's own size. The same for
// sframe::decode (the CLI's full model) on a second line, for reference.
// Usage: sframe_memory_bench SFRAME_BIN SECTION_ADDRESS
// Counted by replacing the global operator new/delete (every allocation the core makes goes
// through them) with ones that add up malloc_usable_size, i.e. what malloc really hands out
// (malloc's own per-chunk header, 8 bytes, is not counted).
#include <fmt/format.h>
#include <malloc.h>

#include <cstdlib>
#include <new>

#include "section_file.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/sframe.h"

namespace {

size_t g_live = 0;
size_t g_peak = 0;

void* counted_alloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (!p) throw std::bad_alloc();
  g_live += malloc_usable_size(p);
  if (g_live > g_peak) g_peak = g_live;
  return p;
}

void counted_free(void* p) noexcept {
  if (!p) return;
  g_live -= malloc_usable_size(p);
  std::free(p);
}

}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: {} SFRAME_BIN SECTION_ADDRESS\n", argv[0]);
    return 2;
  }
  const auto file = unwindkit::bench::load_section(argv[1], argv[2]);
  size_t base = g_live;
  g_peak = base;
  auto index = unwindkit::sframe::Index::build(file.bytes, file.address);
  if (!index) {
    fmt::print(stderr, "cannot index {}\n", argv[1]);
    return 1;
  }
  fmt::print("MEMORY {} {} {} {}\n", file.bytes.size(), g_peak - base, g_live - base,
             index->function_count());
  base = g_live;
  g_peak = base;
  auto decoded = unwindkit::sframe::decode(file.bytes, file.address);
  if (!decoded) {
    fmt::print(stderr, "cannot decode {}\n", argv[1]);
    return 1;
  }
  fmt::print("DECODED {} {}\n", g_peak - base, g_live - base);
  return 0;
}
