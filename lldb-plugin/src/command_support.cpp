// Shared pieces of the `unwindkit` subcommands (see command_support.h).
#include "command_support.h"

#include "unwindkit/file_report.h"

#include <exception>

namespace unwindkit::lldb_plugin {

bool Command::DoExecute(lldb::SBDebugger debugger, char** argv,
                        lldb::SBCommandReturnObject& result) {
  try {
    bool ok = run(debugger, argv, result);
    // LLDB leaves a plugin command's status at eReturnStatusStarted, which
    // SBCommandReturnObject::Succeeded() (scripts, `-b` batch runs) counts as a failure.
    if (ok && (result.GetStatus() == lldb::eReturnStatusStarted ||
               result.GetStatus() == lldb::eReturnStatusInvalid))
      result.SetStatus(lldb::eReturnStatusSuccessFinishResult);
    return ok;
  } catch (const std::exception& e) {
    return usage_error(result, std::string("unwindkit internal error: ") + e.what());
  }
}

std::vector<lldb::SBModule> Command::modules(lldb::SBDebugger debugger, const std::string& name) {
  std::vector<lldb::SBModule> out;
  lldb::SBTarget target = debugger.GetSelectedTarget();
  for (uint32_t i = 0; i < target.GetNumModules(); ++i) {
    lldb::SBModule module = target.GetModuleAtIndex(i);
    lldb::SBFileSpec file = module.GetFileSpec();
    const char* base = file.GetFilename();
    if (name.empty() || (base && name == base) || name == file_path(file)) out.push_back(module);
  }
  return out;
}

bool Command::usage_error(lldb::SBCommandReturnObject& result, const std::string& message) {
  result.SetError(message.c_str());
  return false;
}

std::string Command::no_match(const std::string& name, std::string_view section) {
  // A module asked for by name is reported whatever it has (as GDB's commands report a file).
  if (!name.empty()) return "no module named " + name;
  return "no module has a " + std::string(section) + " section";
}

void Command::print(lldb::SBCommandReturnObject& result, const std::string& text) {
  result.Printf("%s", text.c_str());
}

bool Command::failed(lldb::SBCommandReturnObject& result, const std::string& text) {
  print(result, text);
  result.SetStatus(lldb::eReturnStatusFailed);
  return false;
}

std::optional<Command::LookupTarget> Command::lookup_target(lldb::SBDebugger debugger, char** argv,
                                                           lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, {});
  uint64_t pc = 0;
  if (!args.error.empty() || args.positional.size() != 1 || !parse_number(args.positional[0], pc)) {
    usage_error(result, args.error.empty() ? "expected one address" : args.error);
    return std::nullopt;
  }
  lldb::SBAddress address = debugger.GetSelectedTarget().ResolveLoadAddress(pc);
  lldb::SBModule module = address.GetModule();
  if (!module.IsValid()) {
    failed(result, no_module_text(pc));
    return std::nullopt;
  }
  return LookupTarget{pc, address.GetFileAddress(), installer_.state(module).tables};
}

}  // namespace unwindkit::lldb_plugin
