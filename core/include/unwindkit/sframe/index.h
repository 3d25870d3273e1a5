// The SFrame lookup structure the debugger plugins keep per module: the section's own bytes
// (borrowed) plus one array of function starts. build() makes decode()'s structural checks
// once, with decode()'s Errors; lookup() then reads the one FDE and its rows it needs straight
// from the bytes, so no row is ever materialized. Same results as sframe::lookup on the
// decoded Section, at a fraction of its memory (the decoded model keeps every row).
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

  // As sframe::lookup(decode(bytes, address), pc).
  Result<std::optional<UnwindRule>> lookup(uint64_t pc) const;
  // Every row of the function holding `pc`, as sframe::function_rows (function_rows.h) gives
  // them for its FDE; empty when no function holds `pc`.
  Result<std::vector<prologue::TableRow>> function_rows(uint64_t pc) const;

  const Header& header() const { return header_; }
  size_t function_count() const { return starts_.size(); }
  Arch arch() const;

 private:
  Index(Bytes bytes, Endian endian, const Header& header, uint64_t address)
      : bytes_(bytes),
        endian_(endian),
        header_(header),
        layout_(version_layout(header.version)),
        address_(address) {}

  void build_pages();
  std::optional<size_t> find_fde(uint64_t pc) const;
  // Where FDE `i`'s index entry is.
  uint64_t fde_at(size_t i) const;

  Bytes bytes_;
  Endian endian_;
  Header header_;
  VersionLayout layout_;  // the version's, copied: read on every lookup
  uint64_t address_;
  // Resolved start of each function, in FDE order: sorted when the header says SORTED, and
  // then binary-searched here instead of in the section's wider FDE records.
  std::vector<uint64_t> starts_;
  // When the starts are in order: a page table over [starts_.front(), starts_.back()], pages
  // of 1 << page_shift_ bytes (chosen by build_pages()). pages_[p] is how many starts lie at
  // or before page p's first byte, so a PC in page p has its function among
  // starts_[pages_[p] - 1 .. pages_[p + 1]): the binary search stays inside one page's few
  // functions (a few cache lines) instead of probing the whole array, which is what the
  // profile showed lookups waiting on. Empty: search the whole array.
  std::vector<uint32_t> pages_;
  unsigned page_shift_ = 4;
  // Every function's row starts never decrease (true of any valid section): a row is found
  // by a scan that stops at the first row past the PC.
  bool rows_ascending_ = true;
};

}  // namespace unwindkit::sframe
