// What the plugin uses of the SB API that not every LLDB it is built for has. Each build of
// the plugin proper is against one LLDB's headers (UNWINDKIT_LLDB_API_VERSION; see
// lldb-plugin/CMakeLists.txt), and the loader opens the newest build the running LLDB can
// take: LLDB 22 gets everything, an older LLDB what its SB API offers. What an older build
// goes without is said once, when the plugin loads (missing_features()).
#pragma once

#include <lldb/API/LLDB.h>

#include <cstdint>
#include <optional>
#include <string>

namespace unwindkit::lldb_plugin {

// lldb::SBProgress came with LLDB 20; SBTarget::GetGloballyUniqueID with LLDB 22.
inline constexpr int kProgressSince = 20;
inline constexpr int kTargetIdSince = 22;

// A target's identity while it lives. LLDB 22 gives each target an id of its own; before
// it, the debugger's id and the target's index in that debugger stand for it, which holds
// while no earlier target of the debugger is deleted.
inline uint64_t target_id(lldb::SBTarget target) {
#if UNWINDKIT_LLDB_API_VERSION >= 22
  return target.GetGloballyUniqueID();
#else
  lldb::SBDebugger debugger = target.GetDebugger();
  return (uint64_t{debugger.GetID()} << 32) | debugger.GetIndexOfTarget(target);
#endif
}

// A report in LLDB's progress display (the prompt's status line, lldb-dap's client), where
// the SB API has one; nothing before LLDB 20.
class Progress {
 public:
  Progress(const char* title, const char* details, uint64_t total, lldb::SBDebugger debugger) {
#if UNWINDKIT_LLDB_API_VERSION >= 20
    progress_.emplace(title, details, total, debugger);
#else
    (void)title, (void)details, (void)total, (void)debugger;
#endif
  }
  Progress(const char* title, const char* details, lldb::SBDebugger debugger) {
#if UNWINDKIT_LLDB_API_VERSION >= 20
    progress_.emplace(title, details, debugger);
#else
    (void)title, (void)details, (void)debugger;
#endif
  }
  void increment(uint64_t amount, const char* details) {
#if UNWINDKIT_LLDB_API_VERSION >= 20
    progress_->Increment(amount, details);
#else
    (void)amount, (void)details;
#endif
  }

 private:
#if UNWINDKIT_LLDB_API_VERSION >= 20
  std::optional<lldb::SBProgress> progress_;
#endif
};

// What this build goes without, as one line for the user; empty when nothing.
inline std::string missing_features() {
  std::string missing;
  if (UNWINDKIT_LLDB_API_VERSION < kProgressSince)
    missing += "no progress reports while unwind tables are made (SBProgress, LLDB " +
               std::to_string(kProgressSince) + ")";
  if (UNWINDKIT_LLDB_API_VERSION < kTargetIdSince)
    missing += std::string(missing.empty() ? "" : "; ") +
               "targets told apart by their index (SBTarget::GetGloballyUniqueID, LLDB " +
               std::to_string(kTargetIdSince) + "): after a target is deleted, a later "
               "one may be taken for it and miss its side files";
  if (missing.empty()) return missing;
  return "unwindkit: built for LLDB " + std::to_string(UNWINDKIT_LLDB_API_VERSION) +
         "'s SB API: " + missing + "\n";
}

}  // namespace unwindkit::lldb_plugin
