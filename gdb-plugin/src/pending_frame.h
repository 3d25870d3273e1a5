// GDB's side of one frame unwind, in C++ because it runs once per frame of every backtrace:
// registers from a gdb.PendingFrame in, the core's step, a gdb.UnwindInfo out. The Python
// unwinder makes this one call per frame (the cost of a Python-level adapter per frame was
// most of a backtrace's time; see scripts/bench).
#pragma once

#include <pybind11/pybind11.h>

#include "frame_engine.h"
#include "python_memory.h"

namespace unwindkit::gdb {

// Returns a gdb.UnwindInfo for `pending_frame`, or None when the frame is not ours or the
// step failed (the engine records why). `make_frame_id(cfa, func_start)` builds the frame
// id object this GDB wants. GDB API errors propagate as Python exceptions, for the caller
// to record.
pybind11::object unwind_pending_frame(FrameEngine& engine, pybind11::object pending_frame,
                                      const PythonMemory& memory,
                                      pybind11::object make_frame_id);

}  // namespace unwindkit::gdb
