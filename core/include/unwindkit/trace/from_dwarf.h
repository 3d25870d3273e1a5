// The line table a `.trace` section is built from: a `-g` binary's DWARF line program
// (through elfutils libdw: dwarf_getsrclines) cut into routines by its function symbols.
#pragma once

#include <string>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/trace/encode.h"

namespace unwindkit::trace {

// One module per compile unit, as a compiler emitting `.trace` would write one HDR per object
// file. Addresses are the file's link-time addresses (also for PIE: see from_dwarf.cpp).
// Rows with line 0 (no source line) are left out; file names are basenames (notes §3).
Result<std::vector<ModuleLines>> lines_from_dwarf(const std::string& path);

}  // namespace unwindkit::trace
