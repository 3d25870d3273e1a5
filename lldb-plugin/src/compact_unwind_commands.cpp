// `unwindkit compact-unwind ...` (see compact_unwind_commands.h). The module files are read
// from disk by the core; LLDB only says which file a module is and where it was loaded.
#include "compact_unwind_commands.h"

#include <fmt/format.h>

#include <filesystem>

#include "unwindkit/compact_unwind/report.h"
#include "module_tables.h"
#include "unwindkit/macho/macho_file.h"

namespace unwindkit::lldb_plugin {
namespace {

namespace cu = compact_unwind;

constexpr OptionSpec kOptions[] = {{0, "json", false}, {0, "decoded", false}, {0, "arch", true}};

bool is_macho_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t head[4] = {};
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return n == sizeof head && macho::MachOFile::is_macho(head);
}

// Paths of those of `modules` that are Mach-O files.
std::vector<std::string> macho_module_paths(const std::vector<lldb::SBModule>& modules) {
  std::vector<std::string> out;
  for (lldb::SBModule m : modules) {
    const std::string path = file_path(m.GetFileSpec());
    if (is_macho_file(path)) out.push_back(path);
  }
  return out;
}

// The slice LLDB loaded from a (possibly universal) file: the architecture of its triple.
std::string triple_arch(lldb::SBModule module) {
  const char* triple = module.GetTriple();
  const std::string t = triple ? triple : "";
  return t.substr(0, t.find('-'));
}

}  // namespace

bool CompactUnwindDumpCommand::run(lldb::SBDebugger debugger, char** argv,
                                   lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kOptions);
  if (!args.error.empty()) return usage_error(result, args.error);
  if (args.positional.size() > 1) return usage_error(result, "expected at most one MODULE or FILE");
  const std::string name = args.positional.empty() ? "" : args.positional[0];
  std::vector<std::string> paths = macho_module_paths(modules(debugger, name));
  if (paths.empty() && !name.empty() && std::filesystem::is_regular_file(name)) paths.push_back(name);
  if (paths.empty())
    return usage_error(result, name.empty() ? "no Mach-O module in the target; give a FILE"
                                            : fmt::format("no Mach-O module or file named {}", name));
  std::string out, problems;
  for (const auto& path : paths) {
    auto file = macho::MachOFile::open(path);
    if (!file) {
      problems += fmt::format("{}: {}\n", path, file.error().to_string());
      continue;
    }
    auto slices = cu::select_slices(*file, args.get("arch"), true);
    if (!slices) {
      problems += fmt::format("{}: {}\n", path, slices.error().message);
      continue;
    }
    const auto report = cu::dump_report(path, *slices, args.has("json"), args.has("decoded"));
    if (report.complete || !args.has("json")) out += report.out;
    for (const auto& p : report.problems) problems += p + "\n";
  }
  print(result, out);
  if (!problems.empty()) return usage_error(result, problems);
  return true;
}

bool CompactUnwindLookupCommand::run(lldb::SBDebugger debugger, char** argv,
                                     lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kOptions);
  uint64_t pc = 0;
  if (!args.error.empty() || args.positional.empty() || args.positional.size() > 2 ||
      !parse_number(args.positional[0], pc))
    return usage_error(result, args.error.empty() ? "expected ADDR [MODULE|FILE]" : args.error);
  std::string path, arch = args.get("arch"), where;
  uint64_t file_pc = pc;
  if (args.positional.size() == 2) {
    // An address of the named file: no slide.
    const std::string& name = args.positional[1];
    std::vector<std::string> paths = macho_module_paths(modules(debugger, name));
    path = !paths.empty() ? paths.front() : name;
    if (paths.empty() && !std::filesystem::is_regular_file(name))
      return usage_error(result, fmt::format("no Mach-O module or file named {}", name));
  } else {
    lldb::SBTarget target = debugger.GetSelectedTarget();
    lldb::SBAddress address = target.ResolveLoadAddress(pc);
    // A target without a process whose module was never loaded (`target modules load`) has
    // no load addresses: there, LLDB itself takes an address as a file address.
    if (!address.GetModule().IsValid()) {
      lldb::SBAddress file_address = target.ResolveFileAddress(pc);
      if (file_address.GetLoadAddress(target) == LLDB_INVALID_ADDRESS) address = file_address;
    }
    lldb::SBModule module = address.GetModule();
    if (!module.IsValid()) return usage_error(result, fmt::format("0x{:x} is in no module", pc));
    path = file_path(module.GetFileSpec());
    if (!is_macho_file(path)) return usage_error(result, fmt::format("{} is not a Mach-O file", path));
    file_pc = address.GetFileAddress();
    if (arch.empty()) arch = triple_arch(module);
    where = fmt::format("{}: load address 0x{:x} = file address 0x{:x} (slide 0x{:x})\n", path,
                        pc, file_pc, pc - file_pc);
  }
  auto file = macho::MachOFile::open(path);
  if (!file) return usage_error(result, fmt::format("{}: {}", path, file.error().to_string()));
  // A loaded module names its slice; a thin file has only one whatever the triple says.
  if (!file->is_fat() && args.get("arch").empty()) arch.clear();
  auto slices = cu::select_slices(*file, arch, false);
  if (!slices) return usage_error(result, fmt::format("{}: {}", path, slices.error().message));
  auto report = cu::lookup_report(*slices->front(), file_pc);
  if (!report) return usage_error(result, fmt::format("{}: {}", path, report.error().to_string()));
  if (!*report)
    return usage_error(result, fmt::format("{}: no compact unwind entry covers 0x{:x}", path, file_pc));
  print(result, args.has("json") ? cu::lookup_json(**report) : where + cu::lookup_text(**report));
  if (!(*report)->ok) return usage_error(result, "lookup failed");
  return true;
}

void register_compact_unwind_commands(lldb::SBCommand root, Installer& installer) {
  lldb::SBCommand group = root.AddMultiwordCommand(
      "compact-unwind", "Inspect Apple compact unwind (__unwind_info, __compact_unwind) of the "
                        "target's Mach-O modules or of Mach-O files.");
  group.AddCommand("dump", new CompactUnwindDumpCommand(installer),
                   "Print compact unwind tables as `unwindkit compact-unwind dump` (and "
                   "llvm-objdump --macho --unwind-info) does.",
                   "unwindkit compact-unwind dump [--json] [--decoded] [--arch <arch>] "
                   "[<module>|<file>]",
                   "");
  group.AddCommand("lookup", new CompactUnwindLookupCommand(installer),
                   "Show the compact unwind entry and rule for a load address (or, with a "
                   "module or file, an address of that file); DWARF-mode entries take the "
                   "rule from __eh_frame.",
                   "unwindkit compact-unwind lookup [--json] [--arch <arch>] <address> "
                   "[<module>|<file>]",
                   "");
}

}  // namespace unwindkit::lldb_plugin
