// `unwindkit trace dump | lookup`: the `.trace` (Intel traceback) sections of the selected
// target's modules, as LLDB read them from the module files.
#pragma once

#include "command_support.h"

namespace unwindkit::lldb_plugin {

class TraceDumpCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

class TraceLookupCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

}  // namespace unwindkit::lldb_plugin
