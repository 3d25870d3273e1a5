#include "huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace unwindkit {

void advise_huge_pages(const void* data, size_t size) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (begin + size) & ~(kHugePage - 1);
  if (first < end) ::madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
}

}  // namespace unwindkit
