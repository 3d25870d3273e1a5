#include "unwindkit/trace/lookup.h"

#include <algorithm>

namespace unwindkit::trace {

std::optional<Location> lookup(const Section& section, uint64_t pc) {
  const auto& rows = section.rows;
  // The last row starting at or before pc; rows are sorted by start.
  auto it = std::upper_bound(rows.begin(), rows.end(), pc,
                             [](uint64_t v, const Row& r) { return v < r.begin; });
  if (it == rows.begin()) return std::nullopt;
  const Row& row = *std::prev(it);
  if (pc >= row.end) return std::nullopt;
  const Module& m = section.modules[row.module];
  Location loc;
  loc.line = row.line;
  loc.begin = row.begin;
  loc.end = row.end;
  loc.module = row.module;
  if (row.file < m.files.size()) loc.file = m.files[row.file];
  if (row.routine != kNone) {
    loc.routine = m.routines[row.routine].name;
    loc.routine_start = m.routines[row.routine].start;
  }
  return loc;
}

}  // namespace unwindkit::trace
