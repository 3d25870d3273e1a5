// function_rows() and Index::function_rows(): one function's rows, for the prologue analyzer.
#include "unwindkit/sframe/function_rows.h"

#include "read.h"
#include "unwindkit/sframe/index.h"

namespace unwindkit::sframe {

namespace {

// `fde`'s rows (their words in `words`), each lowered and given its range: up to the next
// row's start, the last one up to the function's end.
Result<std::vector<prologue::TableRow>> table_rows(const Header& header, const Fde& fde,
                                                   std::span<const int32_t> words,
                                                   size_t fde_index) {
  std::vector<prologue::TableRow> out;
  if (fde.pcmask()) return out;
  out.reserve(fde.fres.size());
  for (size_t j = 0; j < fde.fres.size(); ++j) {
    const Fre& fre = fde.fres[j];
    if (fre.first_word > words.size() || fre.word_count() > words.size() - fre.first_word)
      continue;
    auto row = detail::interpret_words(header, fde.flex(header.version), fde.fre_type(), fre,
                                       words.subspan(fre.first_word, fre.word_count()),
                                       fde_index, j);
    if (!row) return tl::unexpected(row.error());
    const uint64_t next = j + 1 < fde.fres.size() ? fde.fres[j + 1].start_offset : fde.size;
    const uint64_t start = fre.start_offset;
    const uint64_t end = std::max(start, std::min<uint64_t>(next, fde.size));
    out.push_back({fde.func_start + start, fde.func_start + end,
                   detail::lower_row(header, fde, fre.info, *row)});
  }
  return out;
}

}  // namespace

Result<std::vector<prologue::TableRow>> function_rows(const Section& section, size_t fde_index) {
  if (fde_index >= section.fdes.size()) return std::vector<prologue::TableRow>();
  return table_rows(section.header, section.fdes[fde_index], section.words, fde_index);
}

Result<std::vector<prologue::TableRow>> Index::function_rows(uint64_t pc) const {
  const auto i = find_fde(pc);
  if (!i) return std::vector<prologue::TableRow>();
  auto layout = detail::read_layout(bytes_, header_.format);
  if (!layout) return tl::unexpected(layout.error());
  auto fde = detail::read_fde(layout->section, layout->fres, header_, *i, address_);
  if (!fde) return tl::unexpected(fde.error());
  if (pc - fde->func_start >= fde->size) return std::vector<prologue::TableRow>();
  std::vector<int32_t> words;
  uint64_t pos = detail::first_fre_pos(header_, *fde);
  for (size_t j = 0; j < fde->num_fres; ++j) {
    auto fre = detail::read_fre(layout->fres, pos, fde->fre_type(), *i, j, header_.format, words);
    if (!fre) return tl::unexpected(fre.error());
    fde->fres.push_back(*fre);
  }
  return table_rows(header_, *fde, words, *i);
}

}  // namespace unwindkit::sframe
