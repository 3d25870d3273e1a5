// The `unwindkit` multiword command and its subcommands (LLDB-style help and syntax on each).
#pragma once

#include <lldb/API/LLDB.h>

#include "installer.h"

namespace unwindkit::lldb_plugin {

void register_commands(lldb::SBDebugger debugger, Installer& installer);

}  // namespace unwindkit::lldb_plugin
