// What unwindkit knows about one module of a target: its SFrame section read from the module
// file through LLDB (SBSection data, never process memory, which a core lacks), decoded by
// the core, and the side file that states it as DWARF CFI for LLDB's own unwinder.
#pragma once

#include <lldb/API/LLDB.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/sframe/section.h"
#include "unwindkit/trace/section.h"

namespace unwindkit::lldb_plugin {

struct ModuleTables {
  std::string path;      // the module's file
  std::string build_id;  // hex, no dashes; empty when the module has none
  bool has_sframe = false;
  uint64_t sframe_address = 0;  // file address of .sframe
  uint64_t sframe_size = 0;
  std::optional<sframe::Section> sframe;  // decoded, when decoding succeeded
  std::optional<Error> error;             // why it did not, with the byte offset
  std::vector<Error> problems;            // what the strict checks found (sframe/validate.h)
  // `.trace` (Intel traceback), read from the module file as .sframe is.
  bool has_trace = false;
  std::vector<uint8_t> trace_bytes;
  std::optional<trace::Section> trace;  // decoded, when decoding succeeded
  std::optional<Error> trace_error;
  bool has_debug_info = false;  // the module's own DWARF, which a side file must not hide
};

// Reads, decodes and checks the module's .sframe. Never fails: problems land in `error`
// and `problems`.
ModuleTables read_module_tables(lldb::SBModule module);

// Writes (or finds in `cache_dir`) the side file for `tables`: the core's synthesized debug
// file of the module (debuginfo/synthesize.h: build-id, placeholders for its sections,
// .debug_frame from every SFrame row and the entry point's outermost rule, .symtab names as
// LLDB itself would give them, `.trace` lines). `with_unwind` false writes the same file
// without .debug_frame and SFrame names, which hands unwinding back to LLDB.
Result<std::filesystem::path> side_file_for(const ModuleTables& tables,
                                            const std::filesystem::path& cache_dir,
                                            bool with_unwind);

// The full path LLDB has for a file ("" when it has none).
std::string file_path(lldb::SBFileSpec file);

// True when unwindkit should give this module's rules to LLDB: decoded and no problems.
inline bool usable(const ModuleTables& t) { return t.sframe && !t.error && t.problems.empty(); }

// True when the side file should carry the module's `.trace` lines: decoded, and the module
// has no DWARF of its own (a side file would take the place of it).
inline bool trace_lines(const ModuleTables& t) { return t.trace && !t.has_debug_info; }

}  // namespace unwindkit::lldb_plugin
