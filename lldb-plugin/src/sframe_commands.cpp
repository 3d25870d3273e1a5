// `unwindkit sframe ...` (see sframe_commands.h).
#include "sframe_commands.h"

#include "unwindkit/file_report.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/report.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::lldb_plugin {
namespace {

constexpr OptionSpec kModuleOption{'m', "module", true};
constexpr OptionSpec kDumpOptions[] = {kModuleOption, {'j', "json", false}};
constexpr OptionSpec kCheckOptions[] = {kModuleOption};

// A module's table as the dump report takes it.
sframe::FileTable file_table(const ModuleTables& t) {
  if (t.sframe) return {t.path, &*t.sframe, {}, t.sframe_size};
  return {t.path, nullptr, t.error->to_string(), 0};
}

}  // namespace

bool SframeDumpCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kDumpOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  if (!args.positional.empty()) return usage_error(result, "unexpected argument; use -m MODULE");
  std::vector<sframe::FileTable> tables;
  for (lldb::SBModule module : modules(debugger, args.get("module"))) {
    const ModuleTables& t = installer_.state(module).tables;
    if (t.has_sframe) tables.push_back(file_table(t));
  }
  if (tables.empty()) return usage_error(result, "no module with .sframe matches");
  print(result, args.has("json") ? sframe::dump_json(tables) : sframe::dump_text(tables));
  return true;
}

bool SframeLookupCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  auto at = lookup_target(debugger, argv, result);
  if (!at) return false;
  const ModuleTables& t = at->tables;
  if (!t.has_sframe) return failed(result, no_section_text(at->pc, t.path, sframe::kSectionName));
  Result<std::optional<UnwindRule>> rule =
      t.sframe ? sframe::lookup(*t.sframe, at->file_pc) : tl::unexpected(*t.error);
  const std::string text = sframe::lookup_text(t.path, at->pc, at->pc - at->file_pc, rule);
  if (rule && *rule) {
    print(result, text);
    return true;
  }
  return failed(result, text);
}

bool SframeCheckCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kCheckOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  std::string out;
  bool bad = false;
  for (lldb::SBModule module : modules(debugger, args.get("module"))) {
    const ModuleTables& t = installer_.state(module).tables;
    if (!t.has_sframe) continue;
    // A table that does not decode has that one problem (the strict checks never ran).
    const std::vector<Error> problems = t.error ? std::vector<Error>{*t.error} : t.problems;
    out += sframe::check_text(t.path, problems);
    bad |= !problems.empty();
  }
  if (out.empty()) return usage_error(result, "no module with .sframe matches");
  if (bad) return failed(result, out);
  print(result, out);
  return true;
}

}  // namespace unwindkit::lldb_plugin
