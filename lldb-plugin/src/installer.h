// Installs unwindkit's unwinding into LLDB: every module of a target that has SFrame gets a
// side file (module_tables.h), from the in-process server as it loads (module_server.h) or
// with `target symbols add`, so LLDB's own unwinder
// gets full plans for bt, frame select, register read, up/down. `disable` swaps in the same
// file without CFI, handing the module back to LLDB's own analysis; `enable` swaps back.
#pragma once

#include <lldb/API/LLDB.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "module_tables.h"
#include "unwindkit/unwind/modules.h"

namespace unwindkit::lldb_plugin {

struct ModuleState {
  ModuleTables tables;
  std::optional<std::filesystem::path> side_file;  // the one currently added to LLDB
  std::string install_error;
};

class Installer {
 public:
  explicit Installer(lldb::SBDebugger debugger);

  // Looks at every module of `target` it has not seen and installs what it can. Cheap when
  // nothing is new: called before every command that walks stacks.
  void sync(lldb::SBTarget target);
  void sync_all();
  void set_enabled(bool enabled);
  bool enabled() const { return enabled_; }

  // Tables of a module, read on first use. Keyed by build-id (else path).
  ModuleState& state(lldb::SBModule module);
  // The module in the core's module model, at the load bias LLDB placed it in `target`:
  // kept across commands. nullptr when its file is not on this machine or it is not loaded.
  std::shared_ptr<unwind::Module> core_module(lldb::SBTarget target, lldb::SBModule module);
  const std::map<std::string, ModuleState>& modules() const { return modules_; }
  const std::filesystem::path& cache_dir() const { return cache_dir_; }

 private:
  // The modules of `target` not yet given what they should have.
  std::vector<lldb::SBModule> pending(lldb::SBTarget target) const;
  // A module LLDB made before `plugin load`, or while the plugin was disabled, has its symbol
  // table read already, and `target symbols add` never reads it again: its frames would keep
  // no name (or, once LLDB has unwound them, the names they had without the plugin). Such
  // modules are made anew instead (removed, dropped from LLDB's module cache, added back at
  // the same load address), so LLDB fetches each one's side file from the in-process server
  // as it loads, as for a module that appears after `plugin load`; where there is no server,
  // it is given the side file as it is added back (SBTarget::AddModule's symbol file). The
  // modules after the first one remade are taken out and put back too (the same objects): the
  // target's order stays. Returns whether it reloaded anything; `pending` is then recomputed.
  bool reload_unserved(lldb::SBTarget target, std::vector<lldb::SBModule>& pending);
  // Whether LLDB made `module` with our side file (with CFI) as its symbol file: fetched from
  // the in-process server, or given by reload_unserved where there is no server.
  bool ours(lldb::SBModule module);
  void install(lldb::SBTarget target, ModuleState& state);

  lldb::SBDebugger debugger_;
  std::filesystem::path cache_dir_;
  bool enabled_ = true;
  std::map<std::string, ModuleState> modules_;
  // By (module key, load bias).
  std::map<std::pair<std::string, uint64_t>, std::shared_ptr<unwind::Module>> core_modules_;
  // What each (target id, module key) has been given: true = the file with CFI, false = the
  // plain one. Modules without SFrame are recorded too, so they are looked at once.
  std::map<std::pair<lldb::user_id_t, std::string>, bool> installed_;
};

std::string module_key(lldb::SBModule module);

}  // namespace unwindkit::lldb_plugin
