// A module file's `.trace` section (Intel traceback: PC → routine, file, line), read from the
// file on disk — `unwindkit trace build` places it outside every PT_LOAD, so process memory
// and cores never hold it — and decoded by the core. Addresses are link-time addresses.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "unwindkit/error.h"

#include "unwindkit/trace/section.h"

namespace unwindkit::gdb {

class TraceTable {
 public:
  // Never fails: a file without `.trace` has has_trace false; a bad one has an error that
  // lookup_text and dump report.
  static std::shared_ptr<TraceTable> load(const std::string& path);

  const std::string& path() const { return path_; }
  bool has_trace() const { return has_trace_; }
  // (routine, file, line, routine start, row begin, row end) at link-time `pc`, or None.
  pybind11::object lookup(uint64_t pc) const;
  // `unwindkit trace dump`'s text (record by record).
  std::string dump() const;
  // `unwindkit trace lookup`'s (text, found) at run-time `pc` of a module loaded `bias` bytes
  // above its link-time addresses.
  std::pair<std::string, bool> lookup_text(uint64_t pc, uint64_t bias) const;

 private:
  std::string path_;
  bool has_trace_ = false;
  std::optional<Error> error_;
  std::vector<uint8_t> bytes_;
  std::optional<trace::Section> section_;
};

void bind_trace(pybind11::module_& m);

}  // namespace unwindkit::gdb
