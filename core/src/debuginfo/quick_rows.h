// The quick file's rows (SynthesizeOptions::analyze false): every function's rows as the
// section states them, for CfiWriter::add's form by rule index.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/dwarf/cfi_writer.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/section.h"  // AddressRange

namespace unwindkit::debuginfo {

// How many times a function's rows are stated: once per `rep` bytes of a PCMASK function's
// `size` (its rows repeat), else (rep 0) once.
inline uint32_t repetitions(uint32_t size, uint32_t rep) {
  return rep != 0 ? (size + rep - 1) / rep : 1;
}

// The rows a module's PCMASK functions state, all their repetitions together, held to
// SynthesizeOptions::max_repeated_rows before any is made.
class RepeatedRows {
 public:
  RepeatedRows(std::string_view section, uint64_t limit) : section_(section), limit_(limit) {}
  // Counts FDE `index`'s rows (`rows` per block; none unless it is PCMASK, `rep` != 0); an
  // Error naming the FDE (at `offset` in the section) once the module's pass the limit.
  Result<void> add(size_t index, uint64_t offset, uint32_t size, uint32_t rep, size_t rows);

 private:
  std::string section_;
  uint64_t limit_;
  uint64_t counted_ = 0;
};

using QuickVisit = std::function<void(uint64_t start, uint64_t end,
                                      std::span<const dwarf::CfiRuleRow> rows,
                                      std::span<const UnwindRule> rules)>;

// visit(start, end, rows, rules) in section order for each function with a row before its
// end, straight from the section's bytes. A PCMASK function's rows repeat every rep_size
// bytes, each repetition rows of its own (as the analyzed file states them). In a PLT (where
// the analyzer proves every register unchanged) the rules leave the callee-saved registers
// unchanged. The section is read once, on a thread of its own, by the strict checks
// (sframe::visit_rule_rows: validate() with every function inside `text`), while `visit` runs
// on the caller's, a batch of functions behind. An Error: the first problem validate() would
// report (the functions visited before it are not to be used), the section's rules are not
// of the module's architecture `arch`, or its PCMASK functions' rows pass `max_repeated_rows`
// (RepeatedRows).
Result<void> quick_rows(const elf::ElfFile& module, const elf::Section& section,
                        sframe::Format format, Arch arch,
                        const std::vector<sframe::AddressRange>& text, uint64_t max_repeated_rows,
                        const QuickVisit& visit);

}  // namespace unwindkit::debuginfo
