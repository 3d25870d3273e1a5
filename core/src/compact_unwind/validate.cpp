// The validator reads every part of the section it can, so that one bad page or array does
// not hide problems elsewhere, and reports each problem with its byte offset and field.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "read.h"
#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/encoding.h"
#include "unwindkit/compact_unwind/unwind_info.h"

namespace unwindkit::compact_unwind {

namespace {

class Checker {
 public:
  Checker(Bytes section, Arch arch) : r_(detail::section_reader(section)), arch_(arch) {}

  std::vector<Error> run() {
    auto h = detail::read_header(r_);
    if (!h) return {h.error()};
    header_ = *h;
    if (h->personalities_count > kMaxPersonalities)
      add(16, "header.personalities_count",
          fmt::format("{} personalities (the encoding can name at most 3)",
                      h->personalities_count));
    if (auto pers = keep(detail::read_u32_array(r_, h->personalities_offset,
                                                h->personalities_count, "personalities")))
      personalities_count_ = static_cast<uint32_t>(pers->size());
    if (auto common = keep(detail::read_u32_array(r_, h->common_encodings_offset,
                                                  h->common_encodings_count, "common_encodings")))
      common_ = std::move(*common);
    for (size_t i = 0; i < common_.size(); ++i)
      check_encoding(common_[i], h->common_encodings_offset + 4 * i,
                     fmt::format("common_encodings[{}]", i));
    auto index = keep(detail::read_index(r_, *h));
    if (!index) return std::move(errors_);
    index_ = std::move(*index);
    check_index();
    if (auto lsdas = keep(detail::read_lsdas(r_, index_))) lsdas_ = std::move(*lsdas);
    check_lsdas();
    for (const LsdaEntry& l : lsdas_) lsda_functions_.push_back(l.function_offset);
    std::sort(lsda_functions_.begin(), lsda_functions_.end());
    for (uint32_t i = 0; i + 1 < index_.size(); ++i) {
      if (index_[i].page_offset == 0) continue;  // reported by check_index
      if (auto page = keep(detail::read_page(r_, index_, i, common_))) check_page(*page);
    }
    return std::move(errors_);
  }

 private:
  void add(uint64_t offset, std::string field, std::string message) {
    errors_.push_back(Error{kUnwindInfoSection, offset, std::move(field), std::move(message)});
  }

  template <class T>
  std::optional<T> keep(Result<T> r) {
    if (r) return std::move(*r);
    errors_.push_back(r.error());
    return std::nullopt;
  }

  size_t index_at(size_t i) const { return header_.index_offset + i * kIndexEntrySize; }

  void check_index() {
    const size_t last = index_.size() - 1;
    if (index_[last].page_offset != 0)
      add(index_at(last) + 4, fmt::format("index[{}].page_offset", last),
          fmt::format("the last index entry is not a sentinel (page offset {:#x}, not 0)",
                      index_[last].page_offset));
    for (size_t i = 0; i < last; ++i) {
      if (index_[i].page_offset == 0)
        add(index_at(i) + 4, fmt::format("index[{}].page_offset", i),
            "page offset 0 before the last entry (a second sentinel)");
      if (index_[i + 1].function_offset <= index_[i].function_offset)
        add(index_at(i + 1), fmt::format("index[{}].function_offset", i + 1),
            fmt::format("{:#x} does not follow {:#x}: index not sorted",
                        index_[i + 1].function_offset, index_[i].function_offset));
      if (index_[i + 1].lsda_offset < index_[i].lsda_offset)
        add(index_at(i + 1) + 8, fmt::format("index[{}].lsda_offset", i + 1),
            fmt::format("{:#x} is below the previous entry's {:#x}", index_[i + 1].lsda_offset,
                        index_[i].lsda_offset));
    }
    for (size_t i = 0; i <= last; ++i)
      if ((index_[i].lsda_offset - index_[0].lsda_offset) % kLsdaEntrySize != 0)
        add(index_at(i) + 8, fmt::format("index[{}].lsda_offset", i),
            fmt::format("{:#x} is not on an LSDA entry boundary", index_[i].lsda_offset));
  }

  void check_lsdas() {
    for (size_t i = 1; i < lsdas_.size(); ++i)
      if (lsdas_[i].function_offset <= lsdas_[i - 1].function_offset)
        add(index_[0].lsda_offset + i * kLsdaEntrySize, fmt::format("lsda[{}].function_offset", i),
            fmt::format("{:#x} does not follow {:#x}: LSDA index not sorted",
                        lsdas_[i].function_offset, lsdas_[i - 1].function_offset));
  }

  void check_encoding(uint32_t encoding, uint64_t offset, const std::string& field) {
    auto d = decode_encoding(arch_, encoding);
    if (!d) {
      add(offset, field, fmt::format("{:#010x}: {}: {}", encoding, d.error().field,
                                     d.error().message));
      return;
    }
    if (d->personality_index > personalities_count_)
      add(offset, field,
          fmt::format("{:#010x}: personality {} of {}", encoding, d->personality_index,
                      personalities_count_));
  }

  void check_page(const Page& p) {
    const bool compressed = p.kind == kPageKindCompressed;
    const uint32_t size = compressed ? kCompressedEntrySize : kRegularEntrySize;
    const uint32_t end = index_[p.index + 1].function_offset;
    for (size_t k = 0; k < p.entries.size(); ++k) {
      const PageEntry& e = p.entries[k];
      const uint64_t at = uint64_t{p.section_offset} + p.entries_offset + k * size;
      const std::string name = fmt::format("page[{}].entry[{}]", p.index, k);
      // The linkers end the last page with an encoding-0 entry at the end of the text.
      const bool terminator = e.function_offset == end && e.encoding == 0;
      if (e.function_offset < p.base_function_offset || (e.function_offset >= end && !terminator))
        add(at, name + ".function_offset",
            fmt::format("{:#x} outside the page's range [{:#x}, {:#x})", e.function_offset,
                        p.base_function_offset, end));
      if (k > 0 && e.function_offset < p.entries[k - 1].function_offset)
        add(at, name + ".function_offset",
            fmt::format("{:#x} below the previous entry's {:#x}: page not sorted",
                        e.function_offset, p.entries[k - 1].function_offset));
      // Compressed entries share the common array's encodings, checked once above.
      if (!compressed || e.encoding_index >= common_.size())
        check_encoding(e.encoding, compressed ? at : at + 4, name + ".encoding");
      if ((e.encoding & kHasLsda) && !has_lsda(e.function_offset))
        add(compressed ? at : at + 4, name + ".encoding",
            fmt::format("HAS_LSDA but no LSDA entry for function offset {:#x}",
                        e.function_offset));
    }
  }

  bool has_lsda(uint32_t function_offset) const {
    return std::binary_search(lsda_functions_.begin(), lsda_functions_.end(), function_offset);
  }

  ByteReader r_;
  Arch arch_;
  Header header_;
  std::vector<uint32_t> common_;
  uint32_t personalities_count_ = 0;
  std::vector<IndexEntry> index_;
  std::vector<LsdaEntry> lsdas_;
  std::vector<uint32_t> lsda_functions_;  // sorted, for the HAS_LSDA check
  std::vector<Error> errors_;
};

}  // namespace

std::vector<Error> validate_unwind_info(Bytes section, Arch arch) {
  return Checker(section, arch).run();
}

}  // namespace unwindkit::compact_unwind
