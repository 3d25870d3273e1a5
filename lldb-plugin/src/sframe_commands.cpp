// `unwindkit sframe ...` (see sframe_commands.h).
#include "sframe_commands.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::lldb_plugin {
namespace {

constexpr OptionSpec kModuleOption{'m', "module", true};
constexpr OptionSpec kDumpOptions[] = {kModuleOption, {'j', "json", false}};
constexpr OptionSpec kCheckOptions[] = {kModuleOption};

// One module's functions and the rule of every row, as JSON.
nlohmann::json rows_json(const ModuleTables& t) {
  nlohmann::json functions = nlohmann::json::array();
  for (const sframe::Fde& fde : t.sframe->fdes) {
    nlohmann::json rows = nlohmann::json::array();
    for (const sframe::Fre& fre : fde.fres) {
      uint64_t address = fde.func_start + fre.start_offset;
      auto rule = sframe::lookup(*t.sframe, address);
      rows.push_back({{"address", address},
                      {"offset", fre.offset},
                      {"rule", rule && *rule ? describe(**rule) : std::string("(none)")}});
    }
    functions.push_back({{"start", fde.func_start},
                         {"end", fde.func_end()},
                         {"pcmask", fde.pcmask()},
                         {"rows", std::move(rows)}});
  }
  return {{"module", t.path},
          {"build_id", t.build_id},
          {"address", t.sframe_address},
          {"version", t.sframe->header.version},
          {"functions", std::move(functions)}};
}

}  // namespace

bool SframeDumpCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kDumpOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  if (!args.positional.empty()) return usage_error(result, "unexpected argument; use -m MODULE");
  bool json = args.has("json");
  nlohmann::json all = nlohmann::json::array();
  std::string out;
  for (lldb::SBModule module : modules(debugger, args.get("module"))) {
    const ModuleTables& t = installer_.state(module).tables;
    if (!t.has_sframe) continue;
    if (!t.sframe) {
      std::string msg = t.error ? t.error->to_string() : "unreadable";
      if (json)
        all.push_back({{"module", t.path}, {"error", msg}});
      else
        out += fmt::format("{}: {}\n", t.path, msg);
      continue;
    }
    if (json)
      all.push_back(rows_json(t));
    else
      out += fmt::format("{}:\n{}\n", t.path, sframe::dump(*t.sframe));
  }
  if (json) out = all.dump(2) + "\n";
  else if (out.empty()) return usage_error(result, "no module with .sframe matches");
  print(result, out);
  return true;
}

bool SframeLookupCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, {});
  uint64_t pc = 0;
  if (!args.error.empty() || args.positional.size() != 1 || !parse_number(args.positional[0], pc))
    return usage_error(result, args.error.empty() ? "expected one address" : args.error);
  lldb::SBTarget target = debugger.GetSelectedTarget();
  lldb::SBAddress address = target.ResolveLoadAddress(pc);
  lldb::SBModule module = address.GetModule();
  if (!module.IsValid()) return usage_error(result, fmt::format("0x{:x} is in no module", pc));
  const ModuleTables& t = installer_.state(module).tables;
  if (!t.sframe)
    return usage_error(result, fmt::format("{}: {}", t.path,
                                           t.error ? t.error->to_string() : "no .sframe"));
  auto rule = sframe::lookup(*t.sframe, address.GetFileAddress());
  if (!rule) return usage_error(result, rule.error().to_string());
  if (!*rule)
    return usage_error(result, fmt::format("no SFrame function covers 0x{:x} in {}", pc, t.path));
  const UnwindRule& r = **rule;
  uint64_t bias = pc - address.GetFileAddress();
  print(result, fmt::format("0x{:x}: {} function [0x{:x}, 0x{:x}): {}\n", pc, t.path,
                            r.func_start + bias, r.func_end + bias, describe(r)));
  return true;
}

bool SframeCheckCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kCheckOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  std::string out;
  size_t bad = 0;
  for (lldb::SBModule module : modules(debugger, args.get("module"))) {
    const ModuleTables& t = installer_.state(module).tables;
    if (!t.has_sframe) continue;
    if (t.error) {
      out += fmt::format("{}: {}\n", t.path, t.error->to_string());
      ++bad;
    } else if (t.problems.empty()) {
      out += fmt::format("{}: ok\n", t.path);
    } else {
      ++bad;
      for (const Error& e : t.problems) out += fmt::format("{}: {}\n", t.path, e.to_string());
    }
  }
  if (out.empty()) return usage_error(result, "no module with .sframe matches");
  print(result, out);
  if (bad != 0) result.SetStatus(lldb::eReturnStatusFailed);
  return bad == 0;
}

}  // namespace unwindkit::lldb_plugin
