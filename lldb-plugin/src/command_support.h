// Shared pieces of the `unwindkit` subcommands: the base class and module selection.
#pragma once

#include <lldb/API/LLDB.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "installer.h"
#include "options.h"

namespace unwindkit::lldb_plugin {

class Command : public lldb::SBCommandPluginInterface {
 public:
  explicit Command(Installer& installer) : installer_(installer) {}
  // Runs `run`; an exception becomes the command's error, never the debugger's end.
  bool DoExecute(lldb::SBDebugger debugger, char** argv,
                 lldb::SBCommandReturnObject& result) final;

 protected:
  virtual bool run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) = 0;
  // Every module of the selected target whose file name or path is `name` (all when empty).
  std::vector<lldb::SBModule> modules(lldb::SBDebugger debugger, const std::string& name);
  static bool usage_error(lldb::SBCommandReturnObject& result, const std::string& message);
  // Why a command covering modules() with tables `section` found none to report.
  static std::string no_match(const std::string& name, std::string_view section);
  static void print(lldb::SBCommandReturnObject& result, const std::string& text);
  // Prints a report that says why the command found nothing, and marks it failed.
  static bool failed(lldb::SBCommandReturnObject& result, const std::string& text);

  // A lookup command's one ADDR argument, with the module LLDB has there and that module's
  // tables. nullopt: `result` already says why (a usage error, or no module there).
  struct LookupTarget {
    uint64_t pc;
    uint64_t file_pc;  // the address in the module's file
    const ModuleTables& tables;
  };
  std::optional<LookupTarget> lookup_target(lldb::SBDebugger debugger, char** argv,
                                            lldb::SBCommandReturnObject& result);

  Installer& installer_;
};

}  // namespace unwindkit::lldb_plugin
