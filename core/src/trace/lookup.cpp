#include "unwindkit/trace/lookup.h"

#include <algorithm>

namespace unwindkit::trace {

std::optional<Location> lookup(const Section& section, uint64_t pc) {
  const auto& rows = section.rows;
  // The rows with the greatest start at or before pc; rows are sorted by start. Several
  // modules may start rows at one address, and any of them may be empty or wrap past 2^64,
  // so each of those rows is tried, not only the last.
  auto last = std::upper_bound(rows.begin(), rows.end(), pc,
                               [](uint64_t v, const Row& r) { return v < r.begin; });
  if (last == rows.begin()) return std::nullopt;
  auto first = std::lower_bound(rows.begin(), last, std::prev(last)->begin,
                                [](const Row& r, uint64_t v) { return r.begin < v; });
  auto hit = std::find_if(first, last, [pc](const Row& r) { return pc < r.end; });
  if (hit == last) return std::nullopt;
  const Row& row = *hit;
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
