// `unwindkit compact-unwind dump | lookup`: Apple compact unwind of the selected target's Mach-O
// modules (LLDB opens Mach-O files as targets on any host) or of any Mach-O file, printed
// exactly as the CLI's `unwindkit compact-unwind dump | lookup` print it.
#pragma once

#include "command_support.h"

namespace unwindkit::lldb_plugin {

class CompactUnwindDumpCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

class CompactUnwindLookupCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

// Adds `compact-unwind dump` and `compact-unwind lookup` under the `unwindkit` command.
void register_compact_unwind_commands(lldb::SBCommand root, Installer& installer);

}  // namespace unwindkit::lldb_plugin
