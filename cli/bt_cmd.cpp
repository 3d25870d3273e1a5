// `unwindkit bt CORE [EXECUTABLE]`: backtraces of a core file's threads with our own
// unwinder (DWARF CFI → SFrame → frame pointers), each frame saying which source unwound
// it, each walk saying why it stopped. `--json` prints the schema in docs/bt-json.md.
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "unwindkit/unwind/bt_report.h"
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
  bool registers = false;
  size_t max_depth = 1024;
  std::string sources = "cfi,sframe,entry,fp";
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
    else if (name == "entry") out.push_back(Source::EntryPoint);
    else return std::nullopt;
    pos = comma + 1;
  }
  return out;
}

int run_bt(const BtArgs& a) {
  const auto sources = parse_sources(a.sources);
  if (!sources) {
    std::fprintf(stderr, "unwindkit bt: --sources takes a comma list of cfi, sframe, entry, fp\n");
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
  wo.sources = unwind::builtin_sources(*sources);
  wo.max_depth = a.max_depth;
  wo.endian = core->endian();

  std::vector<std::string> warnings = core->warnings();
  warnings.insert(warnings.end(), modules.warnings().begin(), modules.warnings().end());
  std::vector<unwind::Walk> walks;
  walks.reserve(threads.size());
  std::vector<unwind::ThreadBacktrace> traces;
  for (const auto* t : threads) {
    const unwind::Walk& w = walks.emplace_back(unwind::walk(t->regs, modules, core->memory(), wo));
    unwind::ThreadBacktrace tb{t->tid, t->signal, &w, {}};
    for (const auto& f : w.frames)
      tb.names.push_back(f.module ? symbolizer.lookup(*f.module, f.address) : std::nullopt);
    traces.push_back(std::move(tb));
  }
  if (a.json) {
    fmt::print("{}", unwind::bt_json(traces, warnings));
    return kExitOk;
  }
  for (const auto& tb : traces)
    fmt::print("thread {} (signal {})\n{}\n", tb.tid, tb.signal, unwind::bt_text(*tb.walk, tb.names, a.registers));
  for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
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
  bt->add_flag("--registers", args->registers,
               "after each frame, its SP and callee-saved registers and where each came from");
  bt->add_option("--max-depth", args->max_depth, "most frames per thread")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  bt->add_option("--sources", args->sources, "unwind sources in order (default cfi,sframe,entry,fp)")
      ->check(CLI::Validator(
          [](std::string& s) { return parse_sources(s) ? std::string() : "not a list of cfi, sframe, entry, fp: " + s; },
          "LIST"));
  bt->add_option("--sysroot", args->sysroot, "prefix for every file the core names")
      ->check(CLI::ExistingDirectory);
  bt->add_option("--solib-search-path", args->search_dirs,
                 "folder searched by file name for files the core names (repeatable)")
      ->check(CLI::ExistingDirectory);
  bt->callback([args, &exit_code] { exit_code = run_bt(*args); });
}

}  // namespace unwindkit::cli
