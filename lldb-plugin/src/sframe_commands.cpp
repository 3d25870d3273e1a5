// `unwindkit sframe ...` (see sframe_commands.h).
#include "sframe_commands.h"

#include <string_view>

#include "unwindkit/file_report.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/report.h"

namespace unwindkit::lldb_plugin {
namespace {

constexpr OptionSpec kModuleOption{'m', "module", true};
constexpr OptionSpec kDumpOptions[] = {kModuleOption, {'j', "json", false}};
constexpr OptionSpec kCheckOptions[] = {kModuleOption};

// A module's section as the dump reports read it: straight from its bytes, which the module
// keeps (decoded first, a 1,000,000-function section took six times its size).
sframe::FileSection file_section(const ModuleTables& t) {
  const auto bytes = *t.module->sframe_section();
  return {t.path, bytes.bytes, bytes.address, bytes.format, {}};
}

}  // namespace

bool SframeDumpCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kDumpOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  if (!args.positional.empty()) return usage_error(result, "unexpected argument; use -m MODULE");
  const std::string name = args.get("module");
  std::vector<sframe::FileSection> files;
  for (lldb::SBModule module : modules(debugger, name)) {
    const ModuleTables& t = installer_.state(module).tables;
    if (t.module->sframe_section()) files.push_back(file_section(t));
    else if (!name.empty()) files.push_back({t.path, std::nullopt, 0, {}, {}});  // says so
  }
  if (files.empty()) return usage_error(result, no_match(name, sframe::kSectionName));
  const auto sink = [&](std::string_view piece) {
    result.Printf("%.*s", static_cast<int>(piece.size()), piece.data());
  };
  if (args.has("json")) sframe::dump_json(files, sink);
  else sframe::dump_text(files, sink);
  return true;
}

bool SframeLookupCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  auto at = lookup_target(debugger, argv, result);
  if (!at) return false;
  const ModuleTables& t = at->tables;
  if (!t.module->sframe_section())
    return failed(result, no_section_text(at->pc, t.path, sframe::kSectionName));
  const Result<std::optional<UnwindRule>> rule = t.module->sframe_rule(at->file_pc);
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
  const std::string name = args.get("module");
  std::string out;
  bool bad = false;
  for (lldb::SBModule module : modules(debugger, name)) {
    const ModuleTables& t = installer_.state(module).tables;
    const auto bytes = t.module->sframe_section();
    if (!bytes) {
      if (!name.empty()) {  // a module asked for by name: it has nothing to check
        out += no_table_text(t.path, {}, sframe::kSectionName);
        bad = true;
      }
      continue;
    }
    // A table that does not decode has that one problem (the strict checks never ran).
    std::vector<Error> problems = t.module->sframe_problems();
    if (auto s = t.module->sframe(); !s && problems.empty()) problems.push_back(s.error());
    out += sframe::check_text(t.path, problems, bytes->format);
    bad |= !problems.empty();
  }
  if (out.empty()) return usage_error(result, no_match(name, sframe::kSectionName));
  if (bad) return failed(result, out);
  print(result, out);
  return true;
}

}  // namespace unwindkit::lldb_plugin
