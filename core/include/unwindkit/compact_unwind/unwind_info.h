// The decoded `__TEXT,__unwind_info` section (version 1): header, common encodings,
// personalities, first-level index (with its sentinel), LSDA index and second-level pages.
// Offsets are as stored: section offsets from the section start, function offsets from the
// image base.
#pragma once

#include <cstdint>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit::compact_unwind {

struct Header {
  uint32_t version = 0;
  uint32_t common_encodings_offset = 0, common_encodings_count = 0;
  uint32_t personalities_offset = 0, personalities_count = 0;
  uint32_t index_offset = 0, index_count = 0;
  bool operator==(const Header&) const = default;
};

struct IndexEntry {
  uint32_t function_offset = 0;
  uint32_t page_offset = 0;  // 0 in the sentinel
  uint32_t lsda_offset = 0;  // start of this page's LSDA entries
  bool operator==(const IndexEntry&) const = default;
};

struct LsdaEntry {
  uint32_t function_offset = 0;
  uint32_t lsda_offset = 0;
  bool operator==(const LsdaEntry&) const = default;
};

struct PageEntry {
  uint32_t function_offset = 0;  // absolute (compressed entries: base + 24-bit offset)
  uint32_t encoding = 0;
  uint32_t encoding_index = 0;   // compressed pages: index into common ++ page encodings
  bool operator==(const PageEntry&) const = default;
};

struct Page {
  uint32_t index = 0;           // first-level index entry this page belongs to
  uint32_t section_offset = 0;
  uint32_t base_function_offset = 0;
  uint32_t kind = 0;            // 2 regular, 3 compressed
  uint16_t entries_offset = 0, entry_count = 0;
  uint16_t encodings_offset = 0, encodings_count = 0;  // compressed only
  std::vector<uint32_t> encodings;                      // page-local encodings
  std::vector<PageEntry> entries;
  bool operator==(const Page&) const = default;
};

struct UnwindInfo {
  Header header;
  std::vector<uint32_t> common_encodings;
  std::vector<uint32_t> personalities;  // image-base offsets of the personality pointers
  std::vector<IndexEntry> index;        // including the sentinel
  std::vector<LsdaEntry> lsdas;         // from index[0].lsda_offset to the sentinel's
  std::vector<Page> pages;              // one per index entry before the sentinel
  bool operator==(const UnwindInfo&) const = default;
};

// Decodes the section (little-endian, as every Mach-O with compact unwind is). Fails at the
// first structure that cannot be read (a count or offset outside the section, an unknown
// page kind); semantic problems are the validator's business.
Result<UnwindInfo> decode_unwind_info(Bytes section);

// Every problem in the section: structure (as decode) plus order, ranges, indices and
// encodings valid for `arch`. Empty when the section is sound.
std::vector<Error> validate_unwind_info(Bytes section, Arch arch);

}  // namespace unwindkit::compact_unwind
