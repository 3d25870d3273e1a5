// A decoded `.trace` section restated as DWARF 4 for debuggers that read only DWARF (LLDB's
// side file): pure function of the model.
#pragma once

#include <cstdint>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/trace/section.h"

namespace unwindkit::trace {

struct DwarfLines {
  std::vector<uint8_t> debug_abbrev, debug_info, debug_line;
};

// One compile unit per module (named after the module, else its first file), spanning the
// module's code range, with a DW_TAG_subprogram per routine (from its start to the end of its
// last row) and a line program holding every row: the shape a debugger needs to give a PC a
// function name and a file:line. Rows that overlap an earlier row are left out (a line
// program's addresses only go up). 64-bit addresses.
DwarfLines to_dwarf(const Section& section, Endian endian);

}  // namespace unwindkit::trace
