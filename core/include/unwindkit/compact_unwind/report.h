// What `unwindkit compact-unwind dump|lookup` print for a Mach-O slice, shared by the CLI and
// both debugger plugins so that every front end prints the same text. Includes the DWARF
// handover: a DWARF-mode entry's rule comes from the slice's `__TEXT,__eh_frame`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/compact_unwind/lookup.h"
#include "unwindkit/compact_unwind/tables.h"
#include "unwindkit/error.h"
#include "unwindkit/macho/macho_file.h"
#include "unwindkit/rules.h"

namespace unwindkit::compact_unwind {

// The slices a command works on: `arch`'s; with an empty `arch`, every slice when
// `all_slices`, else the only one (an error for a universal file with several).
Result<std::vector<const macho::Slice*>> select_slices(const macho::MachOFile& file,
                                                       std::string_view arch, bool all_slices);

struct DumpReport {
  std::string out;                    // stdout: llvm-objdump's text, or the JSON document
  std::vector<std::string> problems;  // one line each, without the "unwindkit: " prefix
  bool complete = true;               // false: a table could not be decoded (out is partial)
};

// `compact-unwind dump` of `slices` (of the file named `file_name`): each slice's tables as
// llvm-objdump prints them (a line naming the slice first when there are several), or the
// JSON document of docs/compact-unwind-json.md; `decoded` adds the spelled-out encodings.
DumpReport dump_report(std::string_view file_name, const std::vector<const macho::Slice*>& slices,
                       bool json, bool decoded);

// The entry covering `pc` (an address of the slice, no slide) in the slice's __unwind_info,
// or in its objects' entries; nullopt when none does.
Result<std::optional<Entry>> find_entry(const SliceTables& t, uint64_t pc);

// The rule for a DWARF-mode entry, from the slice's `__TEXT,__eh_frame` searched by `pc` (the
// encoding's offset is only a hint, and may be 0). nullopt when no FDE covers `pc`.
Result<std::optional<UnwindRule>> dwarf_rule(const macho::Slice& slice, Arch arch, uint64_t pc);

struct LookupReport {
  uint64_t pc = 0;
  Entry entry;
  std::string mode;       // "RBP_FRAME", "DWARF", ... ("?" when the encoding is invalid)
  std::string encoding;   // the encoding spelled out, or "invalid: ..."
  std::string kind;       // "rule", "dwarf", "none" or "error"
  std::string rule_text;  // the rule (describe()), or what went wrong
  std::optional<uint32_t> dwarf_offset_hint;  // DWARF mode: the encoding's __eh_frame offset
  std::optional<UnwindRule> rule;
  bool ok = true;         // false: the entry could not be turned into a rule
};

// Everything `compact-unwind lookup` says about `pc` in `slice`; nullopt when no entry covers
// it. Errors are tables that cannot be read.
Result<std::optional<LookupReport>> lookup_report(const macho::Slice& slice, uint64_t pc);

// The CLI's text ("function: ...", "encoding: ...", "rule: ...") and JSON object.
std::string lookup_text(const LookupReport& r);
std::string lookup_json(const LookupReport& r);

}  // namespace unwindkit::compact_unwind
