// `unwindkit sframe dump | lookup | check`: the SFrame tables of the selected target's
// modules, as LLDB read them from the module files.
#pragma once

#include "command_support.h"

namespace unwindkit::lldb_plugin {

class SframeDumpCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

class SframeLookupCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

class SframeCheckCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

}  // namespace unwindkit::lldb_plugin
