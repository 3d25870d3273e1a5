// File-layout arithmetic shared by the ELF rewriters (section_replace.cpp, segment_add.cpp).
#pragma once

#include <cstdint>

namespace unwindkit::elf::layout {

// The smallest page a loader maps; segments may ask for more (p_align).
inline constexpr uint64_t kMinPage = 0x1000;
// Appended data and header tables only need their natural alignment in the file.
inline constexpr uint64_t kFileAlign = 8;
// The largest alignment (p_align, sh_addralign) a rewriter honours: past it, aligning an
// offset could wrap around.
inline constexpr uint64_t kMaxAlign = uint64_t{1} << 32;

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace unwindkit::elf::layout
