// `unwindkit bt CORE [EXECUTABLE]`: backtraces of a core file's threads with our own
// unwinder (DWARF CFI → SFrame → frame pointers), each frame saying which source unwound
// it, each walk saying why it stopped. `--json` prints the schema in docs/bt-json.md.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "unwindkit/unwind/core_file.h"
#include "unwindkit/unwind/modules.h"
#include "unwindkit/unwind/symbolizer.h"
#include "unwindkit/unwind/walker.h"

namespace unwindkit::cli {

namespace {

struct BtArgs {
  std::string core;
  std::string executable;
  std::string thread;  // "" = the first thread (the one the signal hit), "all", or a tid
  bool json = false;
  size_t max_depth = 1024;
  std::string sources = "cfi,sframe,fp";
  std::string sysroot;
  std::vector<std::string> search_dirs;
};

std::optional<std::vector<Source>> parse_sources(const std::string& text) {
  std::vector<Source> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string name = text.substr(pos, comma - pos);
    if (name == "cfi") out.push_back(Source::Cfi);
    else if (name == "sframe") out.push_back(Source::SFrame);
    else if (name == "fp") out.push_back(Source::FramePointer);
    else return std::nullopt;
    pos = comma + 1;
  }
  return out;
}

struct Row {
  const unwind::Frame* frame;
  std::optional<unwind::SymbolHit> symbol;
};

std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

nlohmann::json frame_json(const Row& row) {
  const unwind::Frame& f = *row.frame;
  nlohmann::json j;
  j["index"] = f.index;
  j["pc"] = hex(f.pc);
  j["cfa"] = f.cfa ? nlohmann::json(hex(*f.cfa)) : nlohmann::json(nullptr);
  j["module"] = f.module ? nlohmann::json(f.module->path()) : nlohmann::json(nullptr);
  j["module_offset"] = f.module ? nlohmann::json(hex(f.module_offset)) : nlohmann::json(nullptr);
  j["symbol"] = row.symbol ? nlohmann::json(row.symbol->name) : nlohmann::json(nullptr);
  j["symbol_offset"] = row.symbol ? nlohmann::json(row.symbol->offset) : nlohmann::json(nullptr);
  j["source"] = f.source ? nlohmann::json(std::string(source_name(*f.source))) : nlohmann::json(nullptr);
  j["source_errors"] = f.source_errors;
  return j;
}

std::string frame_text(const Row& row) {
  const unwind::Frame& f = *row.frame;
  std::string where = "??";
  if (f.module)
    where = fmt::format("{}+{:#x}", std::filesystem::path(f.module->path()).filename().string(),
                        f.module_offset);
  std::string sym = row.symbol ? fmt::format("{}+{:#x}", row.symbol->name, row.symbol->offset) : "??";
  return fmt::format("#{:<3} {:#018x}  {}  {}  [{}]{}", f.index, f.pc, where, sym,
                     f.source ? source_name(*f.source) : "-", f.signal_frame ? " <signal>" : "");
}

int run_bt(const BtArgs& a) {
  const auto sources = parse_sources(a.sources);
  if (!sources) {
    std::fprintf(stderr, "unwindkit bt: --sources takes a comma list of cfi, sframe, fp\n");
    return kExitUsage;
  }
  unwind::CoreOptions co;
  co.executable = a.executable;
  co.sysroot = a.sysroot;
  co.search_dirs = a.search_dirs;
  auto core = unwind::CoreFile::open(a.core, co);
  if (!core) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", a.core.c_str(), core.error().to_string().c_str());
    return kExitDataProblem;
  }
  std::vector<const unwind::CoreThread*> threads;
  for (const auto& t : core->threads())
    if (a.thread == "all" || (a.thread.empty() && threads.empty()) ||
        (!a.thread.empty() && a.thread == std::to_string(t.tid)))
      threads.push_back(&t);
  if (threads.empty()) {
    std::fprintf(stderr, "unwindkit: %s: no thread %s\n", a.core.c_str(), a.thread.c_str());
    return kExitDataProblem;
  }

  auto modules = unwind::ModuleMap::from_core(*core);
  unwind::SymbolizerOptions so;
  if (!a.sysroot.empty()) so.debug_dirs.insert(so.debug_dirs.begin(), a.sysroot + "/usr/lib/debug");
  unwind::Symbolizer symbolizer(so);
  unwind::WalkOptions wo;
  wo.sources = *sources;
  wo.max_depth = a.max_depth;
  wo.endian = core->endian();

  nlohmann::json out;
  out["threads"] = nlohmann::json::array();
  std::vector<std::string> warnings = core->warnings();
  warnings.insert(warnings.end(), modules.warnings().begin(), modules.warnings().end());
  for (const auto* t : threads) {
    const auto w = unwind::walk(t->regs, modules, core->memory(), wo);
    std::vector<Row> rows;
    for (const auto& f : w.frames) {
      // A frame above a normal call is at a return address; above a signal frame it is
      // at the interrupted instruction itself.
      const bool ret = f.index > 0 && !w.frames[f.index - 1].signal_frame;
      rows.push_back({&f, f.module ? symbolizer.lookup(*f.module, f.pc, ret) : std::nullopt});
    }
    if (a.json) {
      nlohmann::json tj;
      tj["tid"] = t->tid;
      tj["signal"] = t->signal;
      tj["frames"] = nlohmann::json::array();
      for (const auto& r : rows) tj["frames"].push_back(frame_json(r));
      tj["stop_reason"] = w.stop_reason;
      out["threads"].push_back(std::move(tj));
    } else {
      fmt::print("thread {} (signal {})\n", t->tid, t->signal);
      for (const auto& r : rows) fmt::print("{}\n", frame_text(r));
      fmt::print("stopped: {}\n\n", w.stop_reason);
    }
  }
  if (a.json) {
    out["warnings"] = warnings;
    fmt::print("{}\n", out.dump(2));
  } else {
    for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  return kExitOk;
}

}  // namespace

void add_bt_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<BtArgs>();
  CLI::App* bt = app.add_subcommand("bt", "Backtrace the threads of a core file");
  bt->add_option("CORE", args->core, "core file")->required()->check(CLI::ExistingFile);
  bt->add_option("EXECUTABLE", args->executable,
                 "the program (needed when the core names no files, as qemu's cores)")
      ->check(CLI::ExistingFile);
  bt->add_option("--thread", args->thread, "thread id (tid) to walk, or 'all' (default: the first)");
  bt->add_flag("--json", args->json, "JSON output (docs/bt-json.md)");
  bt->add_option("--max-depth", args->max_depth, "most frames per thread")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  bt->add_option("--sources", args->sources, "unwind sources in order (default cfi,sframe,fp)")
      ->check(CLI::Validator(
          [](std::string& s) { return parse_sources(s) ? std::string() : "not a list of cfi, sframe, fp: " + s; },
          "LIST"));
  bt->add_option("--sysroot", args->sysroot, "prefix for every file the core names")
      ->check(CLI::ExistingDirectory);
  bt->add_option("--solib-search-path", args->search_dirs,
                 "folder searched by file name for files the core names (repeatable)")
      ->check(CLI::ExistingDirectory);
  bt->callback([args, &exit_code] { exit_code = run_bt(*args); });
}

}  // namespace unwindkit::cli
