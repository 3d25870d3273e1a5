// What `unwindkit trace dump|lookup` print, the same in the CLI and both debugger plugins:
// each front end only finds the section and chooses where the text goes and the exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/trace/lookup.h"
#include "unwindkit/trace/section.h"

namespace unwindkit::trace {

// One file's section as a dump sees it: decoded (with the bytes it came from), or why not.
struct FileTable {
  std::string file;
  const Section* section = nullptr;  // null: `problem` says why
  Bytes bytes;
  std::string problem;  // the decode error; empty: the file has no .trace
};

// The record-by-record dump (dump_records) of one file ("FILE: problem" when it has none);
// several files each under a "FILE:" line.
std::string dump_text(const std::vector<FileTable>& files);

// "PC: routine+0xOFF file:line [begin, end) in FILE", or "PC: ?? in FILE" when no row
// covers it. `found` is the lookup at the section's (link-time) addresses; `bias` (run-time
// minus link-time) moves the range to where `pc` lives.
std::string lookup_text(std::string_view file, uint64_t pc, uint64_t bias,
                        const std::optional<Location>& found);
// {"pc", "found", "routine", "offset", "file", "line", "begin", "end"} (docs/trace-json.md).
std::string lookup_json(std::string_view file, uint64_t pc, uint64_t bias,
                        const std::optional<Location>& found);

}  // namespace unwindkit::trace
