// The CBF (Swift Compact Backtrace Format) part of the `_unwindkit` extension, used by the
// `unwindkit cbf decode|encode` GDB commands.
#pragma once

#include <pybind11/pybind11.h>

namespace unwindkit::gdb {

void add_cbf_bindings(pybind11::module_& m);

}  // namespace unwindkit::gdb
