// `unwindkit status` (modules, tables, side files, errors with byte offsets),
// `unwindkit enable` / `disable` (hand modules to LLDB's own unwinding and back) and
// `unwindkit set|show side-file-wait-limit`.
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

// `unwindkit set side-file-wait-limit BYTES|unlimited` (set) and `unwindkit show
// side-file-wait-limit`: the SFrame size above which a module's first session gets its quick
// side file (ModuleServer::hand_over).
class WaitLimitCommand : public Command {
 public:
  WaitLimitCommand(Installer& installer, bool set) : Command(installer), set_(set) {}
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;

 private:
  bool set_;
};

}  // namespace unwindkit::lldb_plugin
