// `unwindkit status`, `unwindkit enable`, `unwindkit disable`, `unwindkit set|show
// side-file-wait-limit`.
#include "status_commands.h"

#include <fmt/format.h>

#include "module_server.h"
#include "unwindkit/version.h"

namespace unwindkit::lldb_plugin {

bool StatusCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, {});
  if (!args.error.empty() || !args.positional.empty())
    return usage_error(result, args.error.empty() ? "status takes no arguments" : args.error);
  installer_.sync(debugger.GetSelectedTarget());
  std::string out = fmt::format("unwindkit {}\nunwindkit {}; side files in {}\n", kVersion,
                                installer_.enabled() ? "enabled" : "disabled",
                                installer_.cache_dir().string());
  if (const ModuleServer* server = ModuleServer::instance())
    out += fmt::format("modules get them as they load from {}\n", server->url());
  else  // no temporary folder for LLDB's download cache, or no socket
    out += "no in-process server: modules get them as the plugin makes them again\n";
  for (lldb::SBModule module : modules(debugger, "")) {
    const ModuleState& st = installer_.state(module);
    const ModuleTables& t = st.tables;
    const auto section = t.module->sframe_section();
    if (!section) continue;
    out += fmt::format("{}\n  build-id {}\n", t.path, t.build_id.empty() ? "(none)" : t.build_id);
    const auto& problems = t.module->sframe_problems();
    if (auto index = t.module->sframe(); index && *index) {
      out += fmt::format("  {} at 0x{:x} ({} bytes): version {}, {} functions\n",
                         (*index)->header().section_name(), section->address,
                         section->bytes.size(), (*index)->header().version,
                         (*index)->function_count());
    } else if (!index && problems.empty()) {
      out += fmt::format("  {} at 0x{:x} ({} bytes): error: {}\n",
                         sframe::format_info(section->format).section_name, section->address,
                         section->bytes.size(), index.error().to_string());
    }
    for (const Error& e : problems) out += fmt::format("  problem: {}\n", e.to_string());
    if (!usable(t))
      out += "  not installed: LLDB unwinds this module on its own\n";
    else if (!st.install_error.empty())
      out += fmt::format("  not installed: {}\n", st.install_error);
    else if (st.side_file)
      out += fmt::format("  side file: {}{}\n", st.side_file->string(),
                         installer_.enabled() ? "" : " (disabled: no CFI, no names)");
    if (ModuleServer* server = ModuleServer::instance(); server && server->quick(t.build_id))
      out += "  quick side file (SFrame over the side-file-wait-limit): no prologue analysis, so "
             "callee-saved registers are unavailable in callers; the analyzed file is being made "
             "for later sessions\n";
  }
  for (lldb::SBModule module : modules(debugger, "")) {
    const ModuleTables& t = installer_.state(module).tables;
    if (!t.module->sframe_section()) out += fmt::format("{}: no .sframe\n", t.path);
  }
  // Modules with .trace (Intel traceback): names and lines for frames without DWARF.
  for (lldb::SBModule module : modules(debugger, "")) {
    const ModuleState& st = installer_.state(module);
    const ModuleTables& t = st.tables;
    if (!t.has_trace) continue;
    if (!t.trace) {
      out += fmt::format("{}: .trace error: {}\n", t.path,
                         t.trace_error ? t.trace_error->to_string() : "unreadable");
      continue;
    }
    size_t routines = 0;
    for (const auto& m : t.trace->modules) routines += m.routines.size();
    out += fmt::format("{}: .trace: {} modules, {} routines, {} ranges; ", t.path,
                       t.trace->modules.size(), routines, t.trace->rows.size());
    if (t.has_debug_info)
      out += "not used: the module has DWARF of its own\n";
    else if (!st.install_error.empty())
      out += fmt::format("not installed: {}\n", st.install_error);
    else
      out += fmt::format("names and lines in side file {}\n",
                         st.side_file ? st.side_file->string() : "(none yet)");
  }
  print(result, out);
  return true;
}

bool SwitchCommand::run(lldb::SBDebugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, {});
  if (!args.error.empty() || !args.positional.empty())
    return usage_error(result, args.error.empty() ? "takes no arguments" : args.error);
  installer_.set_enabled(enable_);
  print(result, enable_ ? "unwindkit enabled: LLDB unwinds with the SFrame rules\n"
                        : "unwindkit disabled: LLDB unwinds on its own\n");
  return true;
}

bool WaitLimitCommand::run(lldb::SBDebugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, {});
  ModuleServer* server = ModuleServer::instance();
  if (server == nullptr) return usage_error(result, "no server: every side file is analyzed");
  if (set_) {
    uint64_t bytes = 0;
    if (!args.error.empty() || args.positional.size() != 1 ||
        (args.positional[0] != "unlimited" && !parse_number(args.positional[0], bytes)))
      return usage_error(result, "usage: unwindkit set side-file-wait-limit BYTES|unlimited");
    server->set_wait_limit(args.positional[0] == "unlimited" ? ModuleServer::kNoWaitLimit : bytes);
  } else if (!args.error.empty() || !args.positional.empty()) {
    return usage_error(result, "usage: unwindkit show side-file-wait-limit");
  }
  const uint64_t limit = server->wait_limit();
  print(result, limit == ModuleServer::kNoWaitLimit
                    ? std::string("side-file-wait-limit: unlimited (LLDB waits for every "
                                  "module's analyzed side file)\n")
                    : fmt::format("side-file-wait-limit: {} bytes of SFrame (above it, a "
                                  "module's first session gets its quick side file: callee-saved "
                                  "registers unavailable in callers; the analyzed one is made "
                                  "for later sessions)\n",
                                  limit));
  return true;
}

}  // namespace unwindkit::lldb_plugin
