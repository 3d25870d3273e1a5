// The functions a DWARF CFI section describes: each FDE's [initial_location, + address_range),
// read with libdw's dwarf_next_cfi. libdw's lookup API (cfi.h) answers "the row at this pc"
// but never lists FDEs; a writer that emits one record per function (SFrame) needs the list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"

namespace unwindkit::dwarf {

struct FdeRange {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string section;  // ".eh_frame" or ".debug_frame"
  uint64_t offset = 0;  // the FDE's byte offset in that section
  // What looking up each of its rows asks of libdw: rows times one lookup's program bytes
  // and register rules copied (FdeCost in core/src/dwarf/cfi_entries.h).
  uint64_t work = 0;
};

// Every FDE of `.eh_frame` (or, when the file has none, `.debug_frame`), in section order,
// read as libdw reads them. Zero-length FDEs are left out. An FDE libdw cannot use (no CIE,
// an encoding it does not read) is an error naming it, as is a program past the bounds of
// core/src/dwarf/cfi_entries.h.
Result<std::vector<FdeRange>> fde_ranges(const elf::ElfFile& file);

}  // namespace unwindkit::dwarf
