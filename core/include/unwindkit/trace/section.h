// The decoded model of a `.trace` section: the records in file order (for the record dump),
// one Module per HDR, and every line range (for lookups), sorted by start address.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace unwindkit::trace {

enum class RecordKind : uint8_t { Header, Routine, File, Line, Pc, Co1, Co2, Padding };

inline constexpr uint32_t kNone = ~uint32_t{0};

struct Record {
  RecordKind kind = RecordKind::Padding;
  uint8_t tag = 0;
  uint64_t offset = 0;  // in the section
  uint64_t size = 0;
  uint32_t module = kNone;  // index into Section::modules (padding between modules: the one before)
  // Fields, as applicable.
  int64_t line_delta = 0;
  uint64_t pc_delta = 0;     // the real delta (stored value + 1)
  uint32_t file_index = 0;   // File
  uint64_t start_pc = 0;     // Routine
  std::string name;          // Routine
  uint32_t routine = kNone;  // Routine: its index in Module::routines
  // Interpreter state after the record: the current line; for Pc/Co1/Co2 the range start.
  int64_t line = 0;
  uint64_t pc = 0;
};

struct Routine {
  std::string name;
  uint64_t start = 0;
  uint64_t offset = 0;  // of its RTN record
};

struct Module {
  uint64_t offset = 0;  // of the HDR
  uint16_t major = 0;
  uint8_t minor = 0;
  uint32_t size = 0;  // bytes of this module's records, HDR included
  uint64_t code_begin = 0;
  uint32_t code_size = 0;
  std::string name;
  std::vector<std::string> files;
  std::vector<Routine> routines;
};

// One source correlation: [begin, end) maps to `line` of `file` in `routine`.
struct Row {
  uint64_t begin = 0, end = 0;
  int64_t line = 0;
  uint32_t module = 0;
  uint32_t file = 0;              // index into the module's files
  uint32_t routine = kNone;       // index into the module's routines; kNone before any RTN
  uint64_t record_offset = 0;     // of the PC or CO record that closed the range
};

struct Section {
  unsigned pointer_size = 8;
  std::vector<Record> records;
  std::vector<Module> modules;
  std::vector<Row> rows;  // sorted by begin (stable: file order among equal starts)
};

}  // namespace unwindkit::trace
