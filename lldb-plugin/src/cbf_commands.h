// `unwindkit cbf decode | encode`: Swift Compact Backtrace Format records read from process or
// core memory and symbolized with the target's modules, and a thread's backtrace encoded.
#pragma once

#include "command_support.h"

namespace unwindkit::lldb_plugin {

class CbfDecodeCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

class CbfEncodeCommand : public Command {
 public:
  using Command::Command;
  bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) override;
};

// Adds `cbf decode` and `cbf encode` under the `unwindkit` multiword command.
void register_cbf_commands(lldb::SBCommand root, Installer& installer);

}  // namespace unwindkit::lldb_plugin
