// Every compact unwind table of one Mach-O slice, in section order (as llvm-objdump walks
// them), with the text and JSON views shared by `compact-unwind dump` and `dump`.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "unwindkit/compact_unwind/object_section.h"
#include "unwindkit/compact_unwind/unwind_info.h"
#include "unwindkit/macho/macho_file.h"

namespace unwindkit::compact_unwind {

struct SliceTables {
  Arch arch = Arch::X86_64;
  uint64_t image_base = 0;
  // __unwind_info (linked images) or __compact_unwind entries (objects), in section order.
  std::vector<std::variant<UnwindInfo, std::vector<ObjectEntry>>> tables;
};

// Fails on the first table that cannot be decoded, or for a slice of an architecture
// without compact unwind.
Result<SliceTables> decode_slice(const macho::Slice& slice);

// llvm-objdump's text for every table; with `decoded`, each table is followed by its
// spelled-out encodings.
std::string dump_tables(const SliceTables& t, bool decoded);

// The JSON object of docs/compact-unwind-json.md for one slice.
std::string tables_json(const SliceTables& t);

}  // namespace unwindkit::compact_unwind
