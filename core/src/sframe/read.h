// Record readers shared by the decoder, the validator and the index: each reads one header,
// FDE or FRE at a given position and returns it or the Error for the first byte it could not
// read. The decoder and the index stop at the first Error; the validator records it and moves
// on to the next record.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/sframe/row.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe::detail {

// The byte order the magic says; an Error if it is neither order of 0xdee2.
Result<Endian> section_endian(Bytes bytes, Format format);

// The format's header (the magic already checked by section_endian; `section` names the
// format's section).
Result<Header> read_header(const ByteReader& section, Format format);

// What decode() and Index::build() both start from, once the header's version, ABI and
// sub-section bounds are checked: the whole section's reader, the header and a reader over
// the FRE sub-section.
struct Layout {
  ByteReader section;
  Header header;
  ByteReader fres;
};
Result<Layout> read_layout(Bytes bytes, Format format);
// sframe::visit_function_ranges() for a layout already read (its callers need the header too).
Result<void> visit_function_ranges(const Layout& layout, uint64_t section_address,
                                   const std::function<bool(const AddressRange&)>& visit);

// The size of the FRE start field for an FDE's FRE type in `format`; 0 for an unknown type.
// Inline, as check_fre_type(): asked for every row of a large section.
inline size_t fre_start_size(uint8_t fre_type, Format format = Format::SFrame) {
  const FormatInfo& info = format_info(format);
  if (fre_type == info.fre_type_addr1) return 1;
  if (fre_type == info.fre_type_addr2) return 2;
  if (fre_type == info.fre_type_addr4) return 4;
  return 0;
}

std::string fde_field(size_t fde, std::string_view field);
std::string fre_field(size_t fde, size_t fre, std::string_view field);

// FDE `index`: its index entry, and for v3 its attribute record inside `fres` (the FRE
// sub-section reader), read as version_layout() says; the function start resolved against
// `section_address`. No FREs.
Result<Fde> read_fde(const ByteReader& section, const ByteReader& fres, const Header& header,
                     size_t index, uint64_t section_address);

// Position inside the FRE sub-section of an FDE's first FRE.
uint64_t first_fre_pos(const Header& header, const Fde& fde);

// Byte offset in the section of FDE `fde`'s info byte (in its entry, or v3's attribute record).
uint64_t fde_info_offset(const Header& header, const Fde& fde);

// The FDE's FRE type is one the format defines, else the Error at its info byte: checked before
// its rows are read, whose size depends on it.
tl::unexpected<Error> unknown_fre_type(const Header& header, const Fde& fde, size_t fde_index);
inline Result<void> check_fre_type(const Header& header, const Fde& fde, size_t fde_index) {
  if (fre_start_size(fde.fre_type(), header.format) != 0) [[likely]]
    return {};
  return unknown_fre_type(header, fde, fde_index);
}

// FDE `index` with every row of it, as decode() reads them (the first Error met): the rows are
// appended to `rows`, their data words to `words`.
Result<Fde> read_function(const Layout& layout, size_t index, uint64_t section_address,
                          Format format, std::vector<Fre>& rows, std::vector<int32_t>& words);

// decode()'s walk: `visit(index, fde, rows, words)` for every FDE in order, with its rows and
// their data words (each row's first_word counts from the start of `words`); the first Error
// met ends it.
template <class Visit>
Result<void> for_each_function(const Layout& layout, uint64_t section_address, Format format,
                               Visit&& visit) {
  std::vector<Fre> rows;
  std::vector<int32_t> words;
  for (size_t i = 0; i < layout.header.num_fdes; ++i) {
    rows.clear();
    words.clear();
    auto fde = read_function(layout, i, section_address, format, rows, words);
    if (!fde) return tl::unexpected(fde.error());
    visit(i, *fde, rows, words);
  }
  return {};
}

// read_fre field by field, each read checked and named: the Error of a row not wholly inside.
Result<Fre> read_fre_checked(const ByteReader& fres, uint64_t& pos, uint8_t fre_type,
                             size_t fde_index, size_t fre_index, Format format,
                             std::vector<int32_t>& words);

// The FRE at `pos` inside the FRE sub-section `fres`, its data words appended to `words`
// (fre.first_word says where they start); advances `pos` past it. On an Error `words` may
// hold part of the row. Always inlined, for a whole row inside (its start and info, then the
// words its info names): one check for the head and one for the words, the row kept in
// registers (it is read once per row of a section; g++ called it from validate() and the
// walks, 4-7% of their time). Anything else is read_fre_checked's.
[[gnu::always_inline]] inline Result<Fre> read_fre(const ByteReader& fres, uint64_t& pos,
                                                   uint8_t fre_type, size_t fde_index,
                                                   size_t fre_index, Format format,
                                                   std::vector<int32_t>& words) {
  const size_t start_size = fre_start_size(fre_type, format);
  if (start_size != 0 && fres.holds(static_cast<size_t>(pos), start_size + 1)) [[likely]] {
    const auto p = static_cast<size_t>(pos);
    Fre fre;
    fre.info = static_cast<uint8_t>(fres.uint_in(p + start_size, 1));
    const size_t first = p + start_size + 1;
    const size_t word_size = size_t{1} << fre.word_size_code();
    if (fre.word_size_code() != kWordSizeCodeInvalid &&
        fres.holds(first, fre.word_count() * word_size)) [[likely]] {
      fre.offset = fres.table_offset(0) + pos;
      fre.start_offset = static_cast<uint32_t>(fres.uint_in(p, start_size));
      fre.first_word = static_cast<uint32_t>(words.size());
      for (unsigned i = 0; i < fre.word_count(); ++i)
        words.push_back(static_cast<int32_t>(fres.sint_in(first + i * word_size, word_size)));
      pos = first + fre.word_count() * word_size;
      return fre;
    }
  }
  return read_fre_checked(fres, pos, fre_type, fde_index, fre_index, format, words);
}

// A word's raw bits as stored (`info` gives the word size), for flexible-FDE control words.
uint32_t word_bits(int32_t word, uint8_t info);

// The model's architecture for an ABI byte.
Arch abi_arch(uint8_t abi);

// interpret() on one row given by its parts: what the section's rows say, whether held
// decoded (Section) or read straight from the bytes (Index).
Result<Row> interpret_words(const Header& header, bool flex, uint8_t fre_type, const Fre& fre,
                            std::span<const int32_t> words, size_t fde_index, size_t fre_index);

// A row lowered into the shared rule model: `fde` supplies the function's bounds and info
// bits, `fre_info` the row's (RA mangling).
UnwindRule lower_row(const Header& header, const Fde& fde, uint8_t fre_info, const Row& row);

}  // namespace unwindkit::sframe::detail
