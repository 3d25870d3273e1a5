#include "unwindkit/sframe/index.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "read.h"
#include "unwindkit/sframe/sframe.h"
#include "row_memo.h"

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

// Fills Index::entries_ and kinds_ as build() walks the functions in order, and gives the
// table up (leaves it empty) at the first function that starts before the previous one ends.
// A function whose rows the table cannot state exactly as lookup_in() reads them (PCMASK
// rows, rows out of order, a row that does not interpret, too many rows) gets one fallback
// entry.
class Index::TableBuilder {
 public:
  TableBuilder(Index& index, size_t byte_count) : index_(index) {
    // One entry per row and one per function end, the count the table almost always needs,
    // reserved at once: growing by doubling would take twice that at its peak. The header's
    // counts are unchecked: every entry stands for at least one of the section's bytes.
    const Header& h = index.header_;
    index.entries_.reserve(static_cast<size_t>(
        std::min<uint64_t>(uint64_t{h.num_fres} + h.num_fdes + 2, byte_count)));
    index.kinds_.emplace_back();  // kNoRule
  }

  void add(size_t i, const Fde& fde, std::span<const Fre> rows, std::span<const int32_t> words) {
    if (!ok_) return;
    std::vector<Entry>& entries = index_.entries_;
    if (entries.empty()) {
      index_.base_ = fde.func_start;
      end_ = fde.func_start;
      push(0, kNoRule);
    }
    const uint64_t end = fde.func_start + fde.size;
    if (fde.func_start < end_ || end < fde.func_start || end - index_.base_ > UINT32_MAX ||
        i >= kFallback) {
      ok_ = false;
      return;
    }
    end_ = end;
    if (fde.size == 0) return;  // covers nothing: the entry before says so
    const auto start = static_cast<uint32_t>(fde.func_start - index_.base_);
    const size_t first = push(start, kNoRule);  // a row at offset 0 takes its place
    // Rows in order (else lookup_in() chooses as a binary search would): the first row past
    // the end ends the function's rows.
    bool whole = !fde.pcmask() &&
                 std::is_sorted(rows.begin(), rows.end(), [](const Fre& a, const Fre& b) {
                   return a.start_offset < b.start_offset;
                 });
    for (size_t j = 0; whole && j < rows.size(); ++j) {
      const Fre& fre = rows[j];
      whole = fre.first_word <= words.size() && fre.word_count() <= words.size() - fre.first_word;
      if (!whole || fre.start_offset >= fde.size) break;
      const auto kind = kind_of(i, j, fde, fre, words.subspan(fre.first_word, fre.word_count()));
      if (!kind) whole = false;
      else push(start + fre.start_offset, *kind << 16);
    }
    const size_t last = entries.size();
    if (!whole || last - first > 0xff) {
      entries.resize(first);
      push(start, kFallback | static_cast<uint32_t>(i));
    } else {
      for (size_t k = first; k < last; ++k)
        if (entries[k].what != kNoRule)
          entries[k].what |= static_cast<uint32_t>((k - first) << 8 | (last - k));
    }
    push(static_cast<uint32_t>(end - index_.base_), kNoRule);  // taken by a function there
  }

  void finish() {
    // No function: no table (a lookup then searches the empty starts_).
    if (ok_ && !index_.entries_.empty() && index_.entries_.size() <= UINT32_MAX) {
      index_.build_pages();
      return;
    }
    index_.entries_ = {};
    index_.kinds_ = {};
  }

 private:
  // The entry at `start`: a new one, or the last one when it starts there too (the later of
  // two rows or functions at one address is the one a lookup finds).
  size_t push(uint32_t start, uint32_t what) {
    std::vector<Entry>& entries = index_.entries_;
    if (entries.empty() || entries.back().start != start) entries.push_back({start, what});
    else entries.back().what = what;
    return entries.size() - 1;
  }

  // The row's rule in kinds_; nullopt when the table cannot hold it.
  std::optional<uint32_t> kind_of(size_t i, size_t j, const Fde& fde, const Fre& fre,
                                  std::span<const int32_t> words) {
    const auto key = detail::row_key(fde, fre, words);
    if (!key) return std::nullopt;
    if (const uint32_t* kind = known_.find(*key)) return *kind;
    const Header& h = index_.header_;
    auto row = detail::interpret_words(h, fde.flex(h.version), fde.fre_type(), fre, words, i, j);
    if (!row || index_.kinds_.size() >= (kFallback >> 16)) return std::nullopt;
    UnwindRule rule = detail::lower_row(h, fde, fre.info, *row);
    rule.func_start = rule.func_end = 0;  // the function's, filled in by lookup()
    const auto kind = static_cast<uint32_t>(index_.kinds_.size());
    index_.kinds_.push_back(std::move(rule));
    known_.insert(*key, kind);
    return kind;
  }

  Index& index_;
  bool ok_ = true;
  uint64_t end_ = 0;  // where the previous function ends
  detail::RowMemo<uint32_t> known_;
};

Result<Index> Index::build(Bytes bytes, uint64_t section_address, Format format) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const Header& h = layout->header;
  Index index(bytes, layout->section.endian(), h, section_address);
  index.starts_.reserve(h.num_fdes);
  TableBuilder table(index, bytes.size());
  // decode()'s walk over every FDE and row, keeping the function starts and the row table.
  auto walked = detail::for_each_function(
      *layout, section_address, format,
      [&](size_t i, const Fde& fde, const std::vector<Fre>& rows, const std::vector<int32_t>& words) {
        for (size_t j = 1; j < rows.size(); ++j)
          if (rows[j].start_offset < rows[j - 1].start_offset) index.rows_ascending_ = false;
        index.starts_.push_back(fde.func_start);
        table.add(i, fde, rows, words);
      });
  if (!walked) return tl::unexpected(walked.error());
  table.finish();
  return index;
}

Result<Index> Index::build_functions(Bytes bytes, uint64_t section_address, Format format) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  Index index(bytes, layout->section.endian(), layout->header, section_address);
  index.starts_.reserve(layout->header.num_fdes);
  auto visited = detail::visit_function_ranges(*layout, section_address, [&](const AddressRange& fn) {
    index.starts_.push_back(fn.start);
    return true;
  });
  if (!visited) return tl::unexpected(visited.error());
  // Unread: rows are then chosen as a binary search over them would (the rule for any order).
  index.rows_ascending_ = false;
  return index;
}

void Index::build_pages() {
  const uint64_t span = entries_.back().start;
  // The narrowest pages (from 16 bytes) that keep the table at about one entry for every two
  // rows: a page then holds a row or two, so the search touches one cache line, and a section
  // whose few functions lie far apart (hostile or not) cannot make the table large.
  const uint64_t max_pages = uint64_t{entries_.size()} / 2 + 1024;
  while ((span >> page_shift_) + 2 > max_pages) ++page_shift_;
  const uint64_t count = (span >> page_shift_) + 2;
  pages_.resize(count);
  size_t i = 0;
  for (uint64_t p = 0; p < count; ++p) {
    const uint64_t page_start = p << page_shift_;
    while (i < entries_.size() && entries_[i].start <= page_start) ++i;
    pages_[p] = static_cast<uint32_t>(i);
  }
}

Arch Index::arch() const { return detail::abi_arch(header_.abi_arch); }

uint64_t Index::fde_at(size_t i) const {
  return header_.fde_subsection() + i * uint64_t{layout_.entry_size};
}

std::optional<size_t> Index::find_fde(uint64_t pc) const {
  if (header_.sorted()) {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), pc);
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
  if (entries_.empty()) {
    const auto i = find_fde(pc);
    if (!i) return std::optional<UnwindRule>();
    return lookup_in(*i, pc);
  }
  // The last entry is where the last function ends: nothing at or past it.
  if (pc < base_ || pc - base_ >= entries_.back().start) return std::optional<UnwindRule>();
  const auto offset = static_cast<uint32_t>(pc - base_);
  const uint64_t page = offset >> page_shift_;
  // pages_[page] >= 1 (entries_[0] starts at 0): the entry before the page's first is the
  // answer when none in the page starts at or before `offset`.
  const auto it = std::upper_bound(entries_.begin() + pages_[page],
                                   entries_.begin() + pages_[page + 1], offset,
                                   [](uint32_t v, const Entry& e) { return v < e.start; }) -
                  1;
  const uint32_t what = it->what;
  if ((what & kFallback) != 0) return lookup_in(what & ~kFallback, pc);
  const uint32_t kind = what >> 16;
  if (kind == kNoRule) return std::optional<UnwindRule>();
  // Made in place: the rule is copied once, into what is returned.
  Result<std::optional<UnwindRule>> found(tl::in_place, kinds_[kind]);
  UnwindRule& rule = **found;
  rule.func_start = base_ + (it - ((what >> 8) & 0xff))->start;
  rule.func_end = base_ + (it + (what & 0xff))->start;
  return found;
}

Result<std::optional<UnwindRule>> Index::lookup_in(size_t i, uint64_t pc) const {
  const Reader r(bytes_, endian_);
  auto name = [&](const char* field) { return [=] { return detail::fde_field(i, field); }; };
  // The FDE's fields where the version's layout puts them (v3: size and fre_off in the index
  // entry, the rest in its attribute record at the head of its rows).
  const VersionLayout& layout = layout_;
  const uint64_t at = fde_at(i);
  Fde fde;
  fde.func_start = starts_[i];
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
      return [=] { return detail::fre_field(i, j, field); };
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
      return fmt::format("fde[{}].fre[{}].word[{}]", i, found->index, k);
    });
    if (!w) return tl::unexpected(w.error());
    words[k] = *w;
  }
  auto row = detail::interpret_words(header_, fde.flex(header_.version), fde.fre_type(), fre,
                                     std::span<const int32_t>(words.data(), fre.word_count()),
                                     i, found->index);
  if (!row) return tl::unexpected(row.error());
  return std::optional<UnwindRule>(detail::lower_row(header_, fde, fre.info, *row));
}

}  // namespace unwindkit::sframe
