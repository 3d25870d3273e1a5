// Entry point for `plugin load libunwindkit-lldb.so`.
//
// liblldb exports only the SB API, so there is no unwinder plug-in point. Instead every module
// with SFrame gets a side file stating its rules as .debug_frame, which LLDB's own unwinder
// then uses in every frame. Modules that load after `plugin load` get it as they load, from
// an in-process debuginfod server LLDB asks synchronously (module_server.h), in every client.
// Modules LLDB held before (and any the server could not find) get it through `target symbols
// add` (installer.h), synchronously before any command that unwinds runs (command override
// callbacks: LLDB 22 calls them before the command, on the command's thread).
#include <lldb/API/LLDB.h>

#include <array>
#include <cstdint>
#include <exception>
#include <string>

#include "commands.h"
#include "installer.h"
#include "lldb_compat.h"
#include "module_server.h"

namespace unwindkit::lldb_plugin {
namespace {

// Commands that unwind (aliases such as bt, up, down, f, finish, next and step expand to
// these). Stepping needs the caller's frame too.
constexpr std::array kUnwindingCommands = {
    "thread backtrace", "thread list",      "thread select",   "thread info",
    "frame select",     "frame info",       "frame variable",  "register read",
    "process status",   "disassemble",      "thread step-over", "thread step-in",
    "thread step-out",  "thread step-inst", "thread step-inst-over", "thread until",
    "thread return",
};

bool before_unwinding_command(void* baton, const char**) {
  auto* installer = static_cast<Installer*>(baton);
  // Never let a failure here take the debugger down: the command runs either way.
  try {
    installer->sync_all();
  } catch (const std::exception&) {
  }
  return false;  // not handled: LLDB runs the command itself
}

}  // namespace
}  // namespace unwindkit::lldb_plugin

namespace lldb {

// Called by `plugin load`, once per debugger.
bool PluginInitialize(SBDebugger debugger) {
  using namespace unwindkit::lldb_plugin;
  try {
    // An LLDB older than 22 gets the build for its SB API: say once what that build lacks.
    if (const std::string missing = missing_features(); !missing.empty()) {
      lldb::SBFile err = debugger.GetErrorFile();
      size_t written = 0;
      if (err.IsValid()) err.Write(reinterpret_cast<const uint8_t*>(missing.data()),
                                   missing.size(), &written);
    }
    // First: modules that load from now on get their side files as they load, in every client.
    if (ModuleServer* server = ModuleServer::instance()) server->attach(debugger);
    auto* installer = new Installer(debugger);  // lives as long as the process: LLDB never unloads
    register_commands(debugger, *installer);
    SBCommandInterpreter interpreter = debugger.GetCommandInterpreter();
    for (const char* command : kUnwindingCommands)
      interpreter.SetCommandOverrideCallback(command, before_unwinding_command, installer);
    // Targets that exist already: a client using only the SB API types no command after this.
    before_unwinding_command(installer, nullptr);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace lldb
