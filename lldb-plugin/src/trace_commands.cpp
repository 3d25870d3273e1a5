// `unwindkit trace ...` (see trace_commands.h).
#include "trace_commands.h"

#include "unwindkit/file_report.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/trace/lookup.h"
#include "unwindkit/trace/report.h"

namespace unwindkit::lldb_plugin {
namespace {

constexpr OptionSpec kDumpOptions[] = {{'m', "module", true}};

}  // namespace

bool TraceDumpCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kDumpOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  if (!args.positional.empty()) return usage_error(result, "unexpected argument; use -m MODULE");
  const std::string name = args.get("module");
  std::vector<trace::FileTable> tables;
  for (lldb::SBModule module : modules(debugger, name)) {
    const ModuleTables& t = installer_.state(module).tables;
    if (!t.has_trace) {
      if (!name.empty()) tables.push_back({t.path, nullptr, {}, {}});  // asked for: says so
      continue;
    }
    if (t.trace)
      tables.push_back({t.path, &*t.trace, t.trace_bytes, {}});
    else
      tables.push_back({t.path, nullptr, {}, t.trace_error->to_string()});
  }
  if (tables.empty()) return usage_error(result, no_match(name, trace::kSectionName));
  print(result, trace::dump_text(tables));
  return true;
}

bool TraceLookupCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  auto at = lookup_target(debugger, argv, result);
  if (!at) return false;
  const ModuleTables& t = at->tables;
  if (!t.has_trace) return failed(result, no_section_text(at->pc, t.path, trace::kSectionName));
  if (!t.trace) return failed(result, table_error_text(at->pc, t.path, *t.trace_error));
  const auto loc = trace::lookup(*t.trace, at->file_pc);
  const std::string text = trace::lookup_text(t.path, at->pc, at->pc - at->file_pc, loc);
  if (!loc) return failed(result, text);
  print(result, text);
  return true;
}

}  // namespace unwindkit::lldb_plugin
