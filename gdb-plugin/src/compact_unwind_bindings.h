// `_unwindkit.compact_unwind_*`: the core's compact unwind dump and lookup for the GDB
// commands, which print exactly what `unwindkit compact-unwind dump|lookup` print.
#pragma once

#include <pybind11/pybind11.h>

namespace unwindkit::gdb {

void add_compact_unwind_bindings(pybind11::module_& m);

}  // namespace unwindkit::gdb
