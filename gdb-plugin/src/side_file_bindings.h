// The side-file part of the `_unwindkit` extension: the debug file (debuginfo/synthesize.h)
// that hands a module's SFrame to GDB's own DWARF unwinder, so that GDB unwinds, names and
// ends its stack (`_start`'s undefined return address) exactly as it does with `.eh_frame`.
#pragma once

#include <pybind11/pybind11.h>

namespace unwindkit::gdb {

void add_side_file_bindings(pybind11::module_& m);

}  // namespace unwindkit::gdb
