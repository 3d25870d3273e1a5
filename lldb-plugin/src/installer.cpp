// Side-file installation (see installer.h).
#include "installer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "lldb_compat.h"
#include "module_server.h"
#include "private_dir.h"

namespace unwindkit::lldb_plugin {
namespace {

// How far LLDB placed `module` in `target` from its link-time addresses: nullopt when no
// segment of it is loaded.
std::optional<uint64_t> load_bias(lldb::SBTarget target, lldb::SBModule module) {
  for (size_t i = 0; i < module.GetNumSections(); ++i) {
    lldb::SBSection segment = module.GetSectionAtIndex(i);
    const lldb::addr_t load = segment.GetLoadAddress(target);
    if (load != LLDB_INVALID_ADDRESS && segment.GetByteSize() != 0)
      return load - segment.GetFileAddress();
  }
  return std::nullopt;
}

// A module and where LLDB placed it (nullopt: not loaded).
using Placed = std::pair<lldb::SBModule, std::optional<uint64_t>>;

// Threads keep the frames they computed, and each frame the module it is in, so LLDB could
// not drop `modules`. A change of load address flushes every thread (SBTarget does so),
// but a thread keeps its last complete frame list to merge new frames with, and a frame
// object may be held elsewhere too (frame 0 once the stop was shown). So: every frame list is
// completed, the modules unloaded (the complete lists are kept), the lists computed again
// without them (a kept frame matched again takes the new, module-less symbol context), and the
// modules loaded back (the new lists become the kept ones, the old ones go).
void release_frames(lldb::SBTarget target, const std::vector<Placed>& modules) {
  lldb::SBProcess process = target.GetProcess();
  auto compute_all = [&process] {
    for (uint32_t i = 0; i < process.GetNumThreads(); ++i) process.GetThreadAtIndex(i).GetNumFrames();
  };
  compute_all();
  for (const auto& [module, bias] : modules)
    if (bias) target.ClearModuleLoadAddress(module);
  compute_all();
  for (const auto& [module, bias] : modules)
    if (bias) target.SetModuleLoadAddress(module, *bias);
}

// Drops every module no target uses any more from LLDB's shared cache (the ones to remake
// among them, so that adding them back reads their files again), until at most `goal` modules
// remain. A client listening to the target (lldb-dap) holds each removed module in the event
// that tells it so until its event thread has read it: that is waited for, up to a second.
void drop_unused_modules(uint32_t goal) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    lldb::SBDebugger::MemoryPressureDetected();
    if (lldb::SBModule::GetNumberAllocatedModules() <= goal) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::string module_key(lldb::SBModule module) {
  if (const char* uuid = module.GetUUIDString(); uuid && *uuid) return uuid;
  return file_path(module.GetFileSpec());
}

Installer::Installer(lldb::SBDebugger debugger)
    : debugger_(debugger), cache_dir_(side_file_cache_dir()) {}

ModuleState& Installer::state(lldb::SBModule module) {
  std::string key = module_key(module);
  auto it = modules_.find(key);
  if (it == modules_.end()) it = modules_.emplace(key, ModuleState{read_module_tables(module), {}, {}}).first;
  return it->second;
}

std::shared_ptr<unwind::Module> Installer::core_module(lldb::SBTarget target,
                                                      lldb::SBModule module) {
  const std::string path = file_path(module.GetFileSpec());
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return nullptr;
  // LLDB nests ELF sections under their PT_LOAD segments: the top level is the segments.
  std::vector<unwind::Mapping> mappings;
  for (size_t i = 0; i < module.GetNumSections(); ++i) {
    lldb::SBSection segment = module.GetSectionAtIndex(i);
    const lldb::addr_t load = segment.GetLoadAddress(target);
    if (load == LLDB_INVALID_ADDRESS || segment.GetByteSize() == 0) continue;
    mappings.push_back({load, load + segment.GetByteSize(), segment.GetFileOffset()});
  }
  const std::optional<uint64_t> bias = load_bias(target, module);
  if (mappings.empty() || !bias) return nullptr;
  auto& cached = core_modules_[{module_key(module), *bias}];
  if (!cached) {
    cached = std::make_shared<unwind::Module>(path, path, std::move(mappings));
    cached->set_bias(*bias);
  }
  return cached;
}

void Installer::sync_all() {
  for (uint32_t i = 0; i < debugger_.GetNumTargets(); ++i) sync(debugger_.GetTargetAtIndex(i));
}

std::vector<lldb::SBModule> Installer::pending(lldb::SBTarget target) const {
  const lldb::user_id_t id = target_id(target);
  std::vector<lldb::SBModule> modules;
  for (uint32_t i = 0; i < target.GetNumModules(); ++i) {
    lldb::SBModule module = target.GetModuleAtIndex(i);
    auto it = installed_.find({id, module_key(module)});
    if (it == installed_.end() || it->second != enabled_) modules.push_back(module);
  }
  return modules;
}

bool Installer::reload_unserved(lldb::SBTarget target, std::vector<lldb::SBModule>& pending) {
  ModuleServer* server = ModuleServer::instance();
  if (!enabled_) return false;
  const lldb::user_id_t id = target_id(target);
  std::set<std::string> keys;
  for (lldb::SBModule module : pending) {
    const std::string key = module_key(module);
    // Given our file by `target symbols add` already (the server could not serve it): not
    // made again in every sync.
    if (const auto it = installed_.find({id, key}); ours(module) ||
                                                    (it != installed_.end() && it->second))
      continue;
    const ModuleState& st = state(module);
    // Made again, the module finds the file the server puts in place now, if it has one:
    // with none (its own CFI describes every function, say), it stays as LLDB made it. Asked
    // first: usable() decodes the whole section (0.2 s for 1,000,000 functions).
    if (server && server->no_file(st.tables.build_id)) continue;
    if (!usable(st.tables) && !trace_lines(st.tables)) continue;
    if (server) {
      server->prepare(st.tables.path, debugger_.GetID());
      if (server->no_file(st.tables.build_id)) continue;
    }
    keys.insert(key);
  }
  if (keys.empty()) return false;
  pending.clear();  // no reference of ours may keep LLDB from dropping a module

  struct Entry {
    lldb::SBModule module;  // kept for the whole reload only by modules that stay the same
    std::string path, triple, uuid;
    std::string symbols;  // with no server, the side file LLDB is given as it makes the module
    std::optional<uint64_t> bias;
    bool remake = false;
  };
  std::vector<Entry> entries;
  for (uint32_t i = 0; i < target.GetNumModules(); ++i) {
    lldb::SBModule module = target.GetModuleAtIndex(i);
    const bool remake = keys.contains(module_key(module));
    if (entries.empty() && !remake) continue;  // before the first one remade: left alone
    const char* triple = module.GetTriple();
    const char* uuid = module.GetUUIDString();
    std::string symbols;
    if (remake && server == nullptr)
      if (auto file = side_file_for(state(module).tables, cache_dir_, true)) symbols = *file;
    entries.push_back({module, file_path(module.GetFileSpec()), triple ? triple : "",
                       uuid ? uuid : "", std::move(symbols), load_bias(target, module), remake});
  }
  std::vector<Placed> placed;
  for (const Entry& e : entries)
    if (e.remake) placed.emplace_back(e.module, e.bias);
  release_frames(target, placed);
  placed.clear();
  const uint32_t allocated = lldb::SBModule::GetNumberAllocatedModules();
  for (Entry& e : entries) {
    if (e.bias) target.ClearModuleLoadAddress(e.module);
    target.RemoveModule(e.module);
    if (e.remake) e.module = lldb::SBModule();
  }
  drop_unused_modules(allocated - static_cast<uint32_t>(std::count_if(
                                     entries.begin(), entries.end(),
                                     [](const Entry& e) { return e.remake; })));
  for (Entry& e : entries) {
    if (e.remake)
      e.module = target.AddModule(e.path.c_str(), e.triple.empty() ? nullptr : e.triple.c_str(),
                                  e.uuid.empty() ? nullptr : e.uuid.c_str(),
                                  e.symbols.empty() ? nullptr : e.symbols.c_str());
    else
      target.AddModule(e.module);
    if (e.module.IsValid() && e.bias) target.SetModuleLoadAddress(e.module, *e.bias);
  }
  pending = this->pending(target);
  return true;
}

bool Installer::ours(lldb::SBModule module) {
  if (const ModuleServer* server = ModuleServer::instance(); server && server->served(module))
    return true;
  const std::string symbols = file_path(module.GetSymbolFileSpec());
  return !symbols.empty() && symbols == side_file_path(state(module).tables, cache_dir_, true);
}

void Installer::sync(lldb::SBTarget target) {
  if (!target.IsValid()) return;
  const lldb::user_id_t id = target_id(target);
  std::vector<lldb::SBModule> pending = this->pending(target);
  if (pending.empty()) return;
  reload_unserved(target, pending);
  // Reading and converting a large table takes a moment: say so in LLDB's progress display.
  Progress progress("unwindkit: loading unwind tables", "", pending.size(), debugger_);
  for (lldb::SBModule module : pending) {
    const char* name = module.GetFileSpec().GetFilename();
    progress.increment(1, name ? name : "");
    ModuleState& st = state(module);
    auto key = std::make_pair(id, module_key(module));
    // Made with our side file (from the in-process server, or reload_unserved's): with CFI.
    const bool served = ours(module);
    bool had_cfi = served || (installed_.contains(key) && installed_[key]);
    installed_[key] = enabled_;
    if (served && enabled_) {
      st.side_file = file_path(module.GetSymbolFileSpec());
      continue;
    }
    if (ModuleServer* server = ModuleServer::instance(); server && enabled_)
      if (auto why = server->no_file(st.tables.build_id)) {
        st.install_error = *why;
        continue;
      }
    // A module with .trace lines gets its side file whether or not unwinding is enabled:
    // names and lines are not unwinding.
    const bool lines = trace_lines(st.tables);
    if (!usable(st.tables) && !lines) continue;
    if (!enabled_ && !had_cfi && !lines) continue;  // never given ours: LLDB's own state already
    install(target, st);
  }
}

void Installer::install(lldb::SBTarget target, ModuleState& st) {
  auto file = side_file_for(st.tables, cache_dir_, enabled_);
  if (!file) {
    st.install_error = file.error().to_string();
    return;
  }
  lldb::SBCommandInterpreter interpreter = debugger_.GetCommandInterpreter();
  lldb::SBTarget previous = debugger_.GetSelectedTarget();
  debugger_.SetSelectedTarget(target);
  lldb::SBCommandReturnObject result;
  {
    ModuleServer::Pause pause(ModuleServer::instance());
    interpreter.HandleCommand(fmt::format("target symbols add \"{}\"", file->string()).c_str(),
                              result, false);
  }
  if (previous.IsValid()) debugger_.SetSelectedTarget(previous);
  if (result.Succeeded()) {
    st.side_file = *file;
    st.install_error.clear();
  } else {
    st.install_error = result.GetError() ? result.GetError() : "target symbols add failed";
  }
}

void Installer::set_enabled(bool enabled) {
  enabled_ = enabled;
  if (ModuleServer* server = ModuleServer::instance()) server->set_enabled(enabled);
  sync_all();
}

}  // namespace unwindkit::lldb_plugin
