#include "unwindkit/sframe/index.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "read.h"

namespace unwindkit::sframe {

namespace {

// Lookup reads straight from the bytes build() walked: every read is still bounds-checked,
// but in line and without naming its field unless it fails (it cannot while the bytes are
// the ones build() saw).
class Reader {
 public:
  Reader(Bytes bytes, Endian endian) : bytes_(bytes), little_(endian == Endian::Little) {}

  template <class Name>
  Result<uint64_t> uint(uint64_t pos, size_t width, Name name) const {
    if (pos > bytes_.size() || width > bytes_.size() - pos)
      return ByteReader(bytes_, little_ ? Endian::Little : Endian::Big, kSectionName)
          .uint_at(static_cast<size_t>(std::min<uint64_t>(pos, bytes_.size() + 1)), width,
                   name());
    // The widths are 1, 2, 4 or 8: one load each, where a byte loop was a tenth of a lookup.
    const uint8_t* p = bytes_.data() + pos;
    switch (width) {
      case 1: return uint64_t{*p};
      case 2: return load<uint16_t>(p);
      case 4: return load<uint32_t>(p);
      default: return load<uint64_t>(p);
    }
  }

  template <class Name>
  Result<int32_t> word(uint64_t pos, size_t width, Name name) const {
    auto v = uint(pos, width, name);
    if (!v) return tl::unexpected(v.error());
    const uint64_t sign = uint64_t{1} << (width * 8 - 1);
    return static_cast<int32_t>(static_cast<int64_t>((*v ^ sign) - sign));
  }

 private:
  template <class T>
  T load(const uint8_t* p) const {
    T v;
    std::memcpy(&v, p, sizeof v);
    if (little_ == (std::endian::native == std::endian::little)) return v;
    if constexpr (sizeof v == 2) return __builtin_bswap16(v);
    else if constexpr (sizeof v == 4) return __builtin_bswap32(v);
    else return __builtin_bswap64(v);
  }

  Bytes bytes_;
  bool little_;
};

// One row as the scan sees it, and where its words begin.
struct RowAt {
  Fre fre;
  size_t index = 0;
  uint64_t words_at = 0;
};

}  // namespace

Result<Index> Index::build(Bytes bytes, uint64_t section_address, Format format) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const Header& h = layout->header;
  Index index(bytes, layout->section.endian(), h, section_address);
  index.starts_.reserve(h.num_fdes);
  // decode()'s walk over every FDE and row, keeping only the function starts.
  for (size_t i = 0; i < h.num_fdes; ++i) {
    auto fde = detail::read_fde(layout->section, layout->fres, h, i, section_address);
    if (!fde) return tl::unexpected(fde.error());
    if (auto type = detail::check_fre_type(h, *fde, i); !type) return tl::unexpected(type.error());
    uint64_t pos = detail::first_fre_pos(h, *fde);
    uint32_t previous = 0;
    for (size_t j = 0; j < fde->num_fres; ++j) {
      auto fre = detail::check_fre(layout->fres, pos, fde->fre_type(), i, j, format);
      if (!fre) return tl::unexpected(fre.error());
      if (j > 0 && fre->start_offset < previous) index.rows_ascending_ = false;
      previous = fre->start_offset;
    }
    index.starts_.push_back(fde->func_start);
  }
  if (h.sorted()) index.build_pages();
  return index;
}

void Index::build_pages() {
  // Only over starts that really are in order: a header can say SORTED of starts that are
  // not (validate() reports it), and then lookups must search as the decoded model does.
  if (starts_.empty() || starts_.size() > UINT32_MAX ||
      !std::is_sorted(starts_.begin(), starts_.end()))
    return;
  const uint64_t span = starts_.back() - starts_.front();
  // The narrowest pages (from 16 bytes) that keep the table at about one entry per function:
  // a page then holds a function or two, so the search touches one or two cache lines, and
  // a section whose few functions lie far apart (hostile or not) cannot make the table large.
  const uint64_t max_pages = uint64_t{starts_.size()} + 1024;
  while ((span >> page_shift_) + 2 > max_pages) ++page_shift_;
  const uint64_t count = (span >> page_shift_) + 2;
  pages_.resize(count);
  size_t i = 0;
  for (uint64_t p = 0; p < count; ++p) {
    // The last page can begin past the last start, and with a span near 2^64 past 2^64 too:
    // every start lies before it, and its address is never computed (it would wrap).
    if (p > (span >> page_shift_)) {
      pages_[p] = static_cast<uint32_t>(starts_.size());
      continue;
    }
    const uint64_t page_start = starts_.front() + (p << page_shift_);
    while (i < starts_.size() && starts_[i] <= page_start) ++i;
    pages_[p] = static_cast<uint32_t>(i);
  }
}

Arch Index::arch() const { return detail::abi_arch(header_.abi_arch); }

uint64_t Index::fde_at(size_t i) const {
  return header_.fde_subsection() + i * uint64_t{layout_.entry_size};
}

std::optional<size_t> Index::find_fde(uint64_t pc) const {
  if (header_.sorted()) {
    auto first = starts_.begin();
    auto last = starts_.end();
    if (!pages_.empty()) {
      if (pc < starts_.front()) return std::nullopt;
      const uint64_t page = (pc - starts_.front()) >> page_shift_;
      // Within the page (pages_[page] >= 1, so the start before the page's first is the
      // answer when none in the page is at or before pc); past the last page, the rest.
      if (page + 1 < pages_.size()) {
        first += pages_[page];
        last = starts_.begin() + pages_[page + 1];
      } else {
        first += pages_.back();
      }
    }
    auto it = std::upper_bound(first, last, pc);
    if (it == starts_.begin()) return std::nullopt;
    return static_cast<size_t>(it - starts_.begin()) - 1;
  }
  // Unsorted: the first function that covers `pc`, as decode()'s model is searched.
  const Reader r(bytes_, endian_);
  for (size_t i = 0; i < starts_.size(); ++i) {
    if (pc < starts_[i]) continue;
    auto size = r.uint(fde_at(i) + layout_.size_at, 4, [&] { return detail::fde_field(i, "size"); });
    if (size && pc - starts_[i] < *size) return i;
  }
  return std::nullopt;
}

Result<std::optional<UnwindRule>> Index::lookup(uint64_t pc) const {
  const auto i = find_fde(pc);
  if (!i) return std::optional<UnwindRule>();
  const Reader r(bytes_, endian_);
  auto name = [&](const char* field) { return [=] { return detail::fde_field(*i, field); }; };
  // The FDE's fields where the version's layout puts them (v3: size and fre_off in the index
  // entry, the rest in its attribute record at the head of its rows).
  const VersionLayout& layout = layout_;
  const uint64_t at = fde_at(*i);
  Fde fde;
  fde.func_start = starts_[*i];
  auto size = r.uint(at + layout.size_at, 4, name("size"));
  if (!size) return tl::unexpected(size.error());
  fde.size = static_cast<uint32_t>(*size);
  if (pc - fde.func_start >= fde.size) return std::optional<UnwindRule>();
  auto fre_off = r.uint(at + layout.fre_off_at, 4, name("fre_off"));
  if (!fre_off) return tl::unexpected(fre_off.error());
  fde.fre_off = static_cast<uint32_t>(*fre_off);
  const uint64_t attr = layout.attr_in_fres ? header_.fre_subsection() + fde.fre_off : at;
  auto num_fres = r.uint(attr + layout.num_fres_at, layout.num_fres_width, name("num_fres"));
  if (!num_fres) return tl::unexpected(num_fres.error());
  fde.num_fres = static_cast<uint32_t>(*num_fres);
  auto info = r.uint(attr + layout.info_at, 1, name("info"));
  if (!info) return tl::unexpected(info.error());
  fde.info = static_cast<uint8_t>(*info);
  if (layout.info2_at != kAbsent) {
    auto info2 = r.uint(attr + layout.info2_at, 1, name("info2"));
    if (!info2) return tl::unexpected(info2.error());
    fde.info2 = static_cast<uint8_t>(*info2);
  }
  if (layout.rep_size_at != kAbsent) {
    auto rep = r.uint(attr + layout.rep_size_at, 1, name("rep_size"));
    if (!rep) return tl::unexpected(rep.error());
    fde.rep_size = static_cast<uint8_t>(*rep);
  }

  uint64_t offset = pc - fde.func_start;
  if (fde.pcmask()) {
    // PCMASK rows repeat every rep_size bytes from the function start (notes §1).
    const uint32_t rep = header_.version == kVersion1 ? kRepSizeV1PcMask : fde.rep_size;
    if (rep == 0) return std::optional<UnwindRule>();
    offset %= rep;
  }
  // The last row starting at or before `offset`. Rows in order (the rule): scan until the
  // first row past it. Out of order: choose exactly as a binary search over the decoded rows.
  const size_t start_size = detail::fre_start_size(fde.fre_type(), header_.format);
  uint64_t pos = header_.fre_subsection() + fde.fre_off + layout.attr_size;
  std::optional<RowAt> found;
  std::vector<RowAt> all;
  for (size_t j = 0; j < fde.num_fres; ++j) {
    auto fre_name = [&](const char* field) {
      return [=] { return detail::fre_field(*i, j, field); };
    };
    RowAt row{{}, j, pos + start_size + 1};
    row.fre.offset = pos;
    auto start = r.uint(pos, start_size, fre_name("start"));
    if (!start) return tl::unexpected(start.error());
    row.fre.start_offset = static_cast<uint32_t>(*start);
    auto fre_info = r.uint(pos + start_size, 1, fre_name("info"));
    if (!fre_info) return tl::unexpected(fre_info.error());
    row.fre.info = static_cast<uint8_t>(*fre_info);
    pos = row.words_at + (uint64_t{row.fre.word_count()} << row.fre.word_size_code());
    if (!rows_ascending_) {
      all.push_back(row);
      continue;
    }
    if (row.fre.start_offset > offset) break;
    found = row;
  }
  if (!rows_ascending_) {
    auto it = std::upper_bound(all.begin(), all.end(), offset, [](uint64_t v, const RowAt& a) {
      return v < a.fre.start_offset;
    });
    if (it != all.begin()) found = *(it - 1);
  }
  if (!found) return std::optional<UnwindRule>();

  const Fre& fre = found->fre;
  std::array<int32_t, kFreInfoCountMask> words{};  // at most 15: a 4-bit count
  const size_t word_size = size_t{1} << fre.word_size_code();
  for (unsigned k = 0; k < fre.word_count(); ++k) {
    auto w = r.word(found->words_at + k * word_size, word_size, [&] {
      return fmt::format("fde[{}].fre[{}].word[{}]", *i, found->index, k);
    });
    if (!w) return tl::unexpected(w.error());
    words[k] = *w;
  }
  auto row = detail::interpret_words(header_, fde.flex(header_.version), fde.fre_type(), fre,
                                     std::span<const int32_t>(words.data(), fre.word_count()),
                                     *i, found->index);
  if (!row) return tl::unexpected(row.error());
  return std::optional<UnwindRule>(detail::lower_row(header_, fde, fre.info, *row));
}

}  // namespace unwindkit::sframe
