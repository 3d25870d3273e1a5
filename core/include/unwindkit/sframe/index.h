// The SFrame lookup structure the debugger plugins keep per module: the section's own bytes
// (borrowed), one array of function starts, and a table of precomputed rows. build() makes
// decode()'s structural checks once, with decode()'s Errors, and lowers every row then; a
// lookup is a page-table probe and one entry (two dependent memory reads, where a search of
// the functions and then of the section's records waited on four or more). Same results as
// sframe::lookup on the decoded Section, at a fraction of its memory (the decoded model keeps
// every row with its own fields; the table keeps 8 bytes a row and one rule per distinct row).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/prologue/analyzer.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

class Index {
 public:
  // `bytes` must outlive the Index. Errors are decode()'s for the same bytes.
  static Result<Index> build(Bytes bytes, uint64_t section_address,
                             Format format = Format::SFrame);
  // The functions alone, from their index entries (visit_function_ranges()): no row is read, and
  // each lookup reads its function's rows from the bytes. A tenth of build()'s time on a
  // large section, for a few lookups; it checks only what visit_function_ranges() reads, so it is
  // for a section validate() passes.
  static Result<Index> build_functions(Bytes bytes, uint64_t section_address,
                                       Format format = Format::SFrame);

  // As sframe::lookup(decode(bytes, address), pc).
  Result<std::optional<UnwindRule>> lookup(uint64_t pc) const;
  // Every row of the function holding `pc`, as sframe::function_rows (function_rows.h) gives
  // them for its FDE; empty when no function holds `pc`.
  Result<std::vector<prologue::TableRow>> function_rows(uint64_t pc) const;

  const Header& header() const { return header_; }
  size_t function_count() const { return starts_.size(); }
  // Each function's start, in the section's FDE order.
  const std::vector<uint64_t>& function_starts() const { return starts_; }
  Arch arch() const;

 private:
  Index(Bytes bytes, Endian endian, const Header& header, uint64_t address)
      : bytes_(bytes),
        endian_(endian),
        header_(header),
        layout_(version_layout(header.version)),
        address_(address) {}

  // One span of addresses with one answer, in address order: a row of a function (up to the
  // next row or the function's end), a stretch no function covers, or a function whose rows
  // the table does not hold (read from the bytes on each lookup).
  struct Entry {
    uint32_t start;  // from base_
    uint32_t what;   // kFallback | function index, or kind << 16 | back << 8 | forward
  };
  // Bit 31 of `what`: look the function up in the bytes. Else bits 16-30: the row's rule in
  // kinds_ (0: no rule here); bits 8-15 and 0-7: how many entries back the function's first
  // entry lies (it starts at the function's start), and how many ahead the entry at its end.
  static constexpr uint32_t kFallback = uint32_t{1} << 31;
  static constexpr uint32_t kNoRule = 0;
  class TableBuilder;

  std::optional<size_t> find_fde(uint64_t pc) const;
  // lookup() for function `i` (the one find_fde gives for `pc`), read from the bytes.
  Result<std::optional<UnwindRule>> lookup_in(size_t i, uint64_t pc) const;
  // Where FDE `i`'s index entry is.
  uint64_t fde_at(size_t i) const;
  void build_pages();

  Bytes bytes_;
  Endian endian_;
  Header header_;
  VersionLayout layout_;  // the version's, copied: read on every lookup
  uint64_t address_;
  // Resolved start of each function, in FDE order: sorted when the header says SORTED, and
  // then binary-searched here instead of in the section's wider FDE records.
  std::vector<uint64_t> starts_;
  // The row table, when the functions are in order without overlap and span less than 4 GiB
  // (any linked program); empty otherwise, and then lookups search starts_ and read the
  // bytes. entries_[0] starts at base_, the first function's start; the last entry is the
  // end of the last function.
  uint64_t base_ = 0;
  std::vector<Entry> entries_;
  // Each distinct row's rule, without the function's bounds (filled in on lookup); kinds_[0]
  // is unused (kNoRule).
  std::vector<UnwindRule> kinds_;
  // A page table over entries_, pages of 1 << page_shift_ bytes (chosen by build_pages()):
  // pages_[p] is how many entries start at or before page p's first byte, so a PC in page p
  // has its entry among entries_[pages_[p] - 1 .. pages_[p + 1]): a search over one page's
  // few entries (one cache line) instead of the whole array.
  std::vector<uint32_t> pages_;
  unsigned page_shift_ = 4;
  // Every function's row starts never decrease (true of any valid section): a row is found
  // by a scan that stops at the first row past the PC.
  bool rows_ascending_ = true;
};

}  // namespace unwindkit::sframe
