// What the plugin uses of the SB API that not every LLDB it is built for has. Each build of
// the plugin proper is against one LLDB's headers (UNWINDKIT_LLDB_API_VERSION; see
// lldb-plugin/CMakeLists.txt), and the loader opens the newest build the running LLDB can
// take: LLDB 22 gets everything, an older LLDB what its SB API offers. What an older build
// goes without is said once, when the plugin loads (missing_features()).
#pragma once

#include <lldb/API/LLDB.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "unwindkit/debuginfo/synthesize.h"

namespace unwindkit::lldb_plugin {

// lldb::SBProgress came with LLDB 20; SBTarget::GetGloballyUniqueID with LLDB 22.
inline constexpr int kProgressSince = 20;
inline constexpr int kTargetIdSince = 22;

// The running LLDB's major version, from its version text ("lldb version 19.1.7 ..."): an
// LLDB newer than this build's headers takes this build too (the loader's choice).
inline int running_lldb_major() {
  static const int major = [] {
    const char* text = lldb::SBDebugger::GetVersionString();
    const char* digits = text != nullptr ? std::strpbrk(text, "0123456789") : nullptr;
    return digits != nullptr ? std::atoi(digits) : UNWINDKIT_LLDB_API_VERSION;
  }();
  return major;
}

// How the running LLDB names a function it knows only from CFI, which the side files must
// name as LLDB does on the module's `.eh_frame` twin: by address since LLDB 20 (measured on
// 21 and 22), by a number before (19), when LLDB also takes neither names nor CFI from a
// symbol file's `.eh_frame` (debuginfo::FallbackNames).
inline constexpr int kAddressNamesSince = 20;
inline debuginfo::FallbackNames lldb_names() {
  return running_lldb_major() >= kAddressNamesSince ? debuginfo::FallbackNames::Lldb
                                                    : debuginfo::FallbackNames::LldbNumbered;
}

// Whether the running LLDB reads the files the plugin's in-process debuginfod server hands it
// (module_server.h), and takes names and CFI from such a file's `.eh_frame`. LLDB 19 and 21
// do neither (measured: an SB API script, lldb-dap and `bt` on a module made before the
// plugin got no unwinding from a served file; LLDB 19's HTTP client is not even initialized
// outside the `lldb` driver). They do look for `DIR/.build-id/xx/yyyy.debug` in
// `target.debug-file-search-paths` (their default symbol locator), where the plugin puts the
// same files for them, stated in `.debug_frame` and `.symtab`.
inline constexpr int kReadsServedFilesSince = 22;
inline bool lldb_reads_served_files() { return running_lldb_major() >= kReadsServedFilesSince; }

// LLDB 19 keeps the unwind plans (FuncUnwinders) it made of a module's own tables when a symbol
// file is added to the module later (`target symbols add`), and the plugin cannot have it make
// the module again while a command (`plugin load`, `bt`) holds a frame of it. Measured on a
// static AArch64 program keeping libc's .eh_frame: LLDB 19 keeps them, 21 and 22 do not
// (20 not measured).
inline constexpr int kOwnPlansDroppedSince = 20;

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
  if (running_lldb_major() < kAddressNamesSince)
    missing += std::string(missing.empty() ? "" : "; ") +
               "functions known only from SFrame are named ___lldb_unnamed_symbol<N> as LLDB " +
               std::to_string(running_lldb_major()) +
               " numbers them, but where .eh_frame had functions SFrame lacks (a static "
               "link's libc), N differs from the .eh_frame copy's";
  if (running_lldb_major() < kOwnPlansDroppedSince)
    missing += std::string(missing.empty() ? "" : "; ") +
               "the unwind plans LLDB " + std::to_string(running_lldb_major()) +
               " made from a module's own .eh_frame (a static link's libc) before the plugin "
               "gave the module its side file (plugin loaded after the target, enabled again, "
               "or with no server) stay: frames LLDB unwound then end where LLDB alone ends";
  if (missing.empty()) return missing;
  return "unwindkit: built for LLDB " + std::to_string(UNWINDKIT_LLDB_API_VERSION) +
         "'s SB API, in LLDB " + std::to_string(running_lldb_major()) + ": " + missing + "\n";
}

}  // namespace unwindkit::lldb_plugin
