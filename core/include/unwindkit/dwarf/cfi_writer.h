// DWARF CFI writer: states UnwindRule rows as a `.debug_frame` section, so that a debugger's
// own DWARF unwinder applies exactly the rules another format (SFrame) gave us. A pure
// function of its input; the inverse of core/src/dwarf/ (which lowers CFI read by libdw).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/rules.h"

namespace unwindkit::dwarf {

// `rule` is in effect from `address` up to the next row (or the end of the function).
struct CfiRow {
  uint64_t address = 0;
  UnwindRule rule;
};

// One FDE: [start, end) with its rows, sorted by address, the first at `start`.
struct CfiFunction {
  uint64_t start = 0;
  uint64_t end = 0;
  std::vector<CfiRow> rows;
};

// A row whose rule is given by its index in a table (CfiWriter::add's second form).
struct CfiRuleRow {
  uint64_t address = 0;
  uint32_t rule = 0;
};

struct CfiWriterOptions {
  Arch arch = Arch::X86_64;
  Endian endian = Endian::Little;
  unsigned address_size = 8;  // bytes in initial_location / address_range
  // A function that follows the previous one with no gap goes on in its FDE while that FDE's
  // program is shorter than this many bytes (0: never), its first row stated by what changed
  // from the last. The rules at every address are the same, and a reader parses and sorts
  // fewer FDEs. But a reader runs an FDE's program from its start to the pc for every frame,
  // hence the bound; and one that takes FDE extents for function bounds (LLDB) must not get
  // this.
  size_t join_within = 0;
  // Registers the CIE states undefined (its initial instructions), so every FDE starts with
  // them so: a row stating the same needs no bytes for them, one stating otherwise says so
  // (same value where it names none). The quick file's callee-saved registers are undefined
  // in nearly every row, which took a quarter of its bytes stated in each FDE.
  std::vector<uint16_t> cie_undefined;
};

// The bytes of a 32-bit-DWARF `.debug_frame` section: one CIE (version 3, no augmentation,
// code alignment 1, data alignment -word size, initial instructions only for
// options.cie_undefined) and one FDE per
// function. Each row is stated in full the first time and by its changes afterwards: the CFA
// with DW_CFA_def_cfa[_sf] (or DW_CFA_def_cfa_expression for a dereferenced CFA), every
// register with DW_CFA_offset / _extended_sf, val_offset, register, expression,
// val_expression, undefined or same_value. The CFA is always set before the first register.
// AArch64 PAC signing is stated with DW_CFA_AARCH64_negate_ra_state. A rule whose unlisted
// callee-saved registers are unavailable (rules.h `Unlisted`) states each one undefined. `signal_frame` is not
// stated: .debug_frame has no augmentation for it (only .eh_frame's "S").
std::vector<uint8_t> write_debug_frame(std::span<const CfiFunction> functions,
                                       const CfiWriterOptions& options);

// The same CFI as the bytes of an `.eh_frame` for a symbol file, where the section is not
// loaded: CIE id 0, version 1, augmentation "zR" with absolute addresses (DW_EH_PE_udata4
// when every function lies below 4 GiB, else DW_EH_PE_udata8), so no pc-relative base is
// needed; CIE pointers relative to their field; entries padded to the address size. LLDB makes
// its unnamed symbols from a module's `.eh_frame` FDEs (never from `.debug_frame`'s).
std::vector<uint8_t> write_eh_frame(std::span<const CfiFunction> functions,
                                    const CfiWriterOptions& options);

enum class CfiSection : uint8_t { DebugFrame, EhFrame };

// Bytes to reserve for a section of `functions` functions and `rows` rows: a large module's
// tens of megabytes are then not copied at each doubling (an FDE's header and a row's changes
// usually take less).
constexpr size_t cfi_size_estimate(size_t functions, size_t rows) {
  return 64 + 32 * functions + 24 * rows;
}

// The same bytes as write_debug_frame / write_eh_frame, written a function at a time: for a
// caller that makes its functions in order and need not keep them all (a 1 M-function
// module's rows took 600 MB held together).
class CfiWriter {
 public:
  // `highest_end`: the highest end of the functions to come (`.eh_frame` states addresses in
  // 4 bytes when it is at most 4 GiB). `reserve`: bytes to reserve (cfi_size_estimate).
  CfiWriter(CfiSection section, const CfiWriterOptions& options, uint64_t highest_end,
            size_t reserve = 0);
  ~CfiWriter();
  CfiWriter(const CfiWriter&) = delete;
  CfiWriter& operator=(const CfiWriter&) = delete;

  void add(const CfiFunction& function);
  // The function [start, end) with these rows, each rule given by its index in `rules`: the
  // same bytes as add() of the rows with those rules. For rows that repeat a few rules (a
  // section's SFrame rows as they are): the statement of a rule after what came before is
  // worked out once and copied after. `rules` may grow between calls, but an index must name
  // the same rule in every call to one writer. A row naming no rule of `rules` is skipped.
  void add(uint64_t start, uint64_t end, std::span<const CfiRuleRow> rows,
           std::span<const UnwindRule> rules);
  std::vector<uint8_t> finish() &&;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace unwindkit::dwarf
