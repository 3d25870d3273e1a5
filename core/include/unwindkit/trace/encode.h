// Writing `.trace` records for a line table with the shortest records (notes §3): CO1 when
// the line goes up by one and the range is at most 64 bytes, else CO2 when the line delta
// fits a byte and the range is at most 64 bytes, else the smallest LNx + PCx pair; FIL when
// the file changes; zero padding to the pointer size before each RTN.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "unwindkit/error.h"

namespace unwindkit::trace {

struct LineEntry {
  uint64_t begin = 0, end = 0;  // [begin, end), non-empty
  uint32_t file = 0;            // index into ModuleLines::files
  int64_t line = 0;
};

struct RoutineLines {
  std::string name;
  std::vector<LineEntry> lines;  // ascending; a gap starts a new RTN record of the same name
};

struct ModuleLines {
  uint64_t code_begin = 0;
  uint32_t code_size = 0;
  std::vector<std::string> files;
  std::vector<RoutineLines> routines;
};

// One HDR per module, each starting at a pointer-size boundary of the section.
Result<std::vector<uint8_t>> encode(std::span<const ModuleLines> modules, unsigned pointer_size);

}  // namespace unwindkit::trace
