// `unwindkit status` (modules, tables, side files, errors with byte offsets) and
// `unwindkit enable` / `disable` (hand modules to LLDB's own unwinding and back).
#pragma once

#include "command_support.h"

namespace unwindkit::lldb_plugin {

class StatusCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

class SwitchCommand : public Command {
 public:
  SwitchCommand(Installer& installer, bool enable) : Command(installer), enable_(enable) {}
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;

 private:
  bool enable_;
};

}  // namespace unwindkit::lldb_plugin
