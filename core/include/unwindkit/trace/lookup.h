// PC → routine, file, line over a whole decoded section (every module), by binary search.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "unwindkit/trace/section.h"

namespace unwindkit::trace {

struct Location {
  std::string routine;  // empty before any RTN record
  std::string file;
  int64_t line = 0;
  uint64_t begin = 0, end = 0;  // the row's range
  uint64_t routine_start = 0;
  uint32_t module = 0;
};

// `pc` as the section's addresses are written (link-time addresses for a file on disk).
std::optional<Location> lookup(const Section& section, uint64_t pc);

}  // namespace unwindkit::trace
