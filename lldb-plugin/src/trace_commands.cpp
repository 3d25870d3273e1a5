// `unwindkit trace ...` (see trace_commands.h).
#include "trace_commands.h"

#include <fmt/format.h>

#include "unwindkit/trace/dump.h"
#include "unwindkit/trace/lookup.h"

namespace unwindkit::lldb_plugin {
namespace {

constexpr OptionSpec kDumpOptions[] = {{'m', "module", true}};

std::string trace_error(const ModuleTables& t) {
  return t.trace_error ? t.trace_error->to_string() : "no .trace section";
}

}  // namespace

bool TraceDumpCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kDumpOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  if (!args.positional.empty()) return usage_error(result, "unexpected argument; use -m MODULE");
  std::string out;
  for (lldb::SBModule module : modules(debugger, args.get("module"))) {
    const ModuleTables& t = installer_.state(module).tables;
    if (!t.has_trace) continue;
    if (!t.trace)
      out += fmt::format("{}: {}\n", t.path, trace_error(t));
    else
      out += fmt::format("{}:\n{}\n", t.path, trace::dump_records(*t.trace, t.trace_bytes));
  }
  if (out.empty()) return usage_error(result, "no module with .trace matches");
  print(result, out);
  return true;
}

bool TraceLookupCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, {});
  uint64_t pc = 0;
  if (!args.error.empty() || args.positional.size() != 1 || !parse_number(args.positional[0], pc))
    return usage_error(result, args.error.empty() ? "expected one address" : args.error);
  lldb::SBTarget target = debugger.GetSelectedTarget();
  lldb::SBAddress address = target.ResolveLoadAddress(pc);
  lldb::SBModule module = address.GetModule();
  if (!module.IsValid()) return usage_error(result, fmt::format("0x{:x} is in no module", pc));
  const ModuleTables& t = installer_.state(module).tables;
  if (!t.trace) return usage_error(result, fmt::format("{}: {}", t.path, trace_error(t)));
  const uint64_t file_pc = address.GetFileAddress();
  auto loc = trace::lookup(*t.trace, file_pc);
  if (!loc)
    return usage_error(result, fmt::format("no .trace row covers 0x{:x} in {}", pc, t.path));
  const uint64_t bias = pc - file_pc;
  print(result, fmt::format("0x{:x}: {}+{:#x} {}:{} [0x{:x}, 0x{:x}) in {}\n", pc,
                            loc->routine.empty() ? "?" : loc->routine, file_pc - loc->routine_start,
                            loc->file, loc->line, loc->begin + bias, loc->end + bias, t.path));
  return true;
}

}  // namespace unwindkit::lldb_plugin
