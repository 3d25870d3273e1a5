// `unwindkit bt [-t THREAD]` and `unwindkit regs N [-t THREAD]`: unwindkit's own walk
// (walk.h), each frame with the table that unwound it.
#pragma once

#include "command_support.h"

namespace unwindkit::lldb_plugin {

class BacktraceCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

class RegistersCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

}  // namespace unwindkit::lldb_plugin
