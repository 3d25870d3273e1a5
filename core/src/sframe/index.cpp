#include "unwindkit/sframe/index.h"

#include <algorithm>
#include <array>

#include "read.h"

namespace unwindkit::sframe {

namespace {

// The readers of a section build() accepted.
struct Readers {
  ByteReader section, fres;
};

Readers readers(Bytes bytes, Endian endian, const Header& h) {
  const ByteReader r(bytes, endian, kSectionName);
  // In bounds: build() checked the same layout.
  return {r, ByteReader(bytes.subspan(static_cast<size_t>(h.fre_subsection()), h.fre_len),
                        endian, kSectionName, h.fre_subsection())};
}

}  // namespace

Result<Index> Index::build(Bytes bytes, uint64_t section_address) {
  auto layout = detail::read_layout(bytes);
  if (!layout) return tl::unexpected(layout.error());
  const Header& h = layout->header;
  Index index(bytes, layout->section.endian(), h, section_address);
  index.starts_.reserve(h.num_fdes);
  // decode()'s walk over every FDE and row, keeping only the function starts.
  for (size_t i = 0; i < h.num_fdes; ++i) {
    auto fde = detail::read_fde(layout->section, layout->fres, h, i, section_address);
    if (!fde) return tl::unexpected(fde.error());
    uint64_t pos = detail::first_fre_pos(h, *fde);
    uint32_t previous = 0;
    for (size_t j = 0; j < fde->num_fres; ++j) {
      auto fre = detail::check_fre(layout->fres, pos, fde->fre_type(), i, j);
      if (!fre) return tl::unexpected(fre.error());
      if (j > 0 && fre->start_offset < previous) index.rows_ascending_ = false;
      previous = fre->start_offset;
    }
    index.starts_.push_back(fde->func_start);
  }
  return index;
}

Arch Index::arch() const { return detail::abi_arch(header_.abi_arch); }

std::optional<size_t> Index::find_fde(uint64_t pc) const {
  const auto [section, fres] = readers(bytes_, endian_, header_);
  // A function's size is the u32 right after its start field (i32 in v1/v2, i64 in v3).
  const uint64_t stride = detail::fde_size(header_.version);
  const uint64_t size_at = header_.version == kVersion3 ? 8 : 4;
  auto covers = [&](size_t i) {
    if (pc < starts_[i]) return false;
    auto size = section.uint_at(static_cast<size_t>(header_.fde_subsection() + i * stride +
                                                    size_at),
                                4, {});
    return size && pc - starts_[i] < *size;
  };
  if (header_.sorted()) {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), pc);
    if (it == starts_.begin()) return std::nullopt;
    const auto i = static_cast<size_t>(it - starts_.begin()) - 1;
    if (covers(i)) return i;
    return std::nullopt;
  }
  for (size_t i = 0; i < starts_.size(); ++i)
    if (covers(i)) return i;
  return std::nullopt;
}

Result<std::optional<UnwindRule>> Index::lookup(uint64_t pc) const {
  const auto fde_index = find_fde(pc);
  if (!fde_index) return std::optional<UnwindRule>();
  const auto [section, fres] = readers(bytes_, endian_, header_);
  auto fde = detail::read_fde(section, fres, header_, *fde_index, address_);
  if (!fde) return tl::unexpected(fde.error());
  uint64_t offset = pc - fde->func_start;
  if (fde->pcmask()) {
    // PCMASK rows repeat every rep_size bytes from the function start (notes §1).
    const uint32_t rep = header_.version == kVersion1 ? kRepSizeV1PcMask : fde->rep_size;
    if (rep == 0) return std::optional<UnwindRule>();
    offset %= rep;
  }
  // The last row starting at or before `offset`, and where its words begin.
  std::optional<Fre> row;
  std::optional<size_t> row_index;
  uint64_t words_at = 0;
  uint64_t pos = detail::first_fre_pos(header_, *fde);
  if (rows_ascending_) {
    for (size_t j = 0; j < fde->num_fres; ++j) {
      const uint64_t at = pos;
      auto fre = detail::check_fre(fres, pos, fde->fre_type(), *fde_index, j);
      if (!fre) return tl::unexpected(fre.error());
      if (fre->start_offset > offset) break;
      row = *fre;
      row_index = j;
      words_at = at + detail::fre_start_size(fde->fre_type()) + 1;
    }
  } else {
    // Rows out of order: choose exactly as a binary search over the decoded rows does.
    std::vector<std::pair<Fre, uint64_t>> rows;
    for (size_t j = 0; j < fde->num_fres; ++j) {
      const uint64_t at = pos;
      auto fre = detail::check_fre(fres, pos, fde->fre_type(), *fde_index, j);
      if (!fre) return tl::unexpected(fre.error());
      rows.emplace_back(*fre, at + detail::fre_start_size(fde->fre_type()) + 1);
    }
    auto it = std::upper_bound(rows.begin(), rows.end(), offset,
                               [](uint64_t v, const auto& r) { return v < r.first.start_offset; });
    if (it != rows.begin()) {
      --it;
      row = it->first;
      row_index = static_cast<size_t>(it - rows.begin());
      words_at = it->second;
    }
  }
  if (!row) return std::optional<UnwindRule>();
  // At most 15 words (a 4-bit count), in bounds (build() read them).
  std::array<int32_t, kFreInfoCountMask> words{};
  const size_t word_size = size_t{1} << row->word_size_code();
  for (unsigned k = 0; k < row->word_count(); ++k) {
    auto w = fres.sint_at(static_cast<size_t>(words_at + k * word_size), word_size, {});
    if (!w) return tl::unexpected(w.error());
    words[k] = static_cast<int32_t>(*w);
  }
  auto interpreted = detail::interpret_words(
      header_, fde->flex(header_.version), fde->fre_type(), *row,
      std::span<const int32_t>(words.data(), row->word_count()), *fde_index, *row_index);
  if (!interpreted) return tl::unexpected(interpreted.error());
  return std::optional<UnwindRule>(detail::lower_row(header_, *fde, row->info, *interpreted));
}

}  // namespace unwindkit::sframe
