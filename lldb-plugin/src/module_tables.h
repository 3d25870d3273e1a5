// What unwindkit knows about one module of a target: the module in the core's one module model
// (its file at file addresses: where .sframe is, the Index, the strict checks' verdict), its
// `.trace` read through LLDB, and the side file that states them for LLDB's own unwinder.
#pragma once

#include <lldb/API/LLDB.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/unwind/modules.h"
#include "unwindkit/trace/section.h"

namespace unwindkit::lldb_plugin {

struct ModuleTables {
  std::string path;      // the module's file
  std::string build_id;  // hex, no dashes; empty when the module has none
  std::shared_ptr<unwind::Module> module;  // load bias 0: file addresses
  // `.trace` (Intel traceback), read from the module file as .sframe is.
  bool has_trace = false;
  std::vector<uint8_t> trace_bytes;
  std::optional<trace::Section> trace;  // decoded, when decoding succeeded
  std::optional<Error> trace_error;
  bool has_debug_info = false;  // the module's own DWARF, which a side file must not hide
};

// The module's tables. Never fails: problems are the core Module's and the `.trace` fields'.
ModuleTables read_module_tables(lldb::SBModule module);

// Writes (or finds in `cache_dir`) the side file for `tables`: the core's synthesized debug
// file of the module (debuginfo/synthesize.h: build-id, placeholders for its sections,
// .debug_frame from every SFrame row and the entry point's outermost rule, .symtab names as
// LLDB itself would give them, `.trace` lines). `with_unwind` false writes the same file
// without .debug_frame and SFrame names, which hands unwinding back to LLDB.
Result<std::filesystem::path> side_file_for(const ModuleTables& tables,
                                            const std::filesystem::path& cache_dir,
                                            bool with_unwind);
// Where side_file_for keeps that file.
std::filesystem::path side_file_path(const ModuleTables& tables,
                                     const std::filesystem::path& cache_dir, bool with_unwind);

// The full path LLDB has for a file ("" when it has none).
std::string file_path(lldb::SBFileSpec file);

// True when unwindkit should give this module's rules to LLDB: an SFrame table that decodes
// and passes the strict checks.
inline bool usable(const ModuleTables& t) {
  auto s = t.module->sframe();
  return s && *s != nullptr;
}

// True when the side file should carry the module's `.trace` lines: decoded, and the module
// has no DWARF of its own (a side file would take the place of it).
inline bool trace_lines(const ModuleTables& t) { return t.trace && !t.has_debug_info; }

}  // namespace unwindkit::lldb_plugin
