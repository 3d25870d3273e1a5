// unwindkit's own stack walk of an LLDB thread: LLDB gives frame 0's registers and memory,
// SFrame gives the rules, the core stepper computes each caller. Used by `unwindkit bt` and
// `unwindkit regs`, independent of what LLDB's unwinder does with the side files.
#pragma once

#include <lldb/API/LLDB.h>

#include <optional>
#include <string>
#include <vector>

#include "installer.h"
#include "unwindkit/rules.h"
#include "unwindkit/stepper.h"

namespace unwindkit::lldb_plugin {

struct WalkFrame {
  RegisterSet regs;                // this frame's registers (frame 0: LLDB's)
  std::optional<UnwindRule> rule;  // the SFrame rule that unwound this frame; none: LLDB did
  std::string module;              // file name of the module holding the pc
};

struct Walk {
  std::vector<WalkFrame> frames;
  std::string end;  // why the walk stopped ("outermost frame", "no SFrame for libc.so.6", ...)
};

std::optional<Arch> target_arch(lldb::SBTarget target);
// DWARF columns 0..n-1 are the general registers LLDB reads and `unwindkit regs` prints.
uint16_t general_register_count(Arch arch);

// Walks at most `max_frames` frames of `thread`.
Walk walk_thread(Installer& installer, lldb::SBThread thread, size_t max_frames);

}  // namespace unwindkit::lldb_plugin
