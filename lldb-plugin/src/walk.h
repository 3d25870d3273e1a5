// unwindkit's own stack walk of an LLDB thread: the core's walker over the target's modules
// (the core's module model: files as LLDB found them, at the load biases LLDB placed them),
// memory through LLDB, frame 0's registers from LLDB. Used by `unwindkit bt` and
// `unwindkit regs`, independent of what LLDB's unwinder does with the side files.
#pragma once

#include <lldb/API/LLDB.h>

#include <optional>

#include "installer.h"
#include "unwindkit/rules.h"
#include "unwindkit/unwind/walker.h"

namespace unwindkit::lldb_plugin {

std::optional<Arch> target_arch(lldb::SBTarget target);

// Walks at most `max_frames` frames of `thread`; the walk's frames point into `modules`, which
// the call fills with the target's modules.
unwind::Walk walk_thread(Installer& installer, lldb::SBThread thread, size_t max_frames,
                         unwind::ModuleMap& modules);

}  // namespace unwindkit::lldb_plugin
