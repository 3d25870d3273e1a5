#include "read.h"

#include <fmt/format.h>

#include "unwindkit/compact_unwind/constants.h"

namespace unwindkit::compact_unwind::detail {

namespace {

// Checks that `count` records of `size` bytes at `offset` lie inside the section.
Result<void> check_array(const ByteReader& r, uint64_t field_offset, uint64_t offset,
                         uint64_t count, uint32_t size, const std::string& what) {
  const uint64_t end = uint64_t{offset} + count * size;
  if (offset > r.size() || end > r.size())
    return r.error_at(static_cast<size_t>(field_offset), what,
                      fmt::format("{} entries of {} bytes at {:#x} end at {:#x}, past the "
                                  "section end {:#x}",
                                  count, size, offset, end, r.size()));
  return {};
}

}  // namespace

ByteReader section_reader(Bytes section) {
  return ByteReader(section, Endian::Little, kUnwindInfoSection);
}

Result<Header> read_header(const ByteReader& r) {
  ByteReader c = r;
  Header h;
  uint32_t* fields[] = {&h.version,
                        &h.common_encodings_offset,
                        &h.common_encodings_count,
                        &h.personalities_offset,
                        &h.personalities_count,
                        &h.index_offset,
                        &h.index_count};
  static constexpr const char* kNames[] = {
      "header.version",           "header.common_encodings_offset",
      "header.common_encodings_count", "header.personalities_offset",
      "header.personalities_count",    "header.index_offset",
      "header.index_count"};
  for (size_t i = 0; i < std::size(fields); ++i) {
    auto v = c.u32(kNames[i]);
    if (!v) return tl::unexpected(v.error());
    *fields[i] = *v;
  }
  if (h.version != kUnwindInfoVersion)
    return r.error_at(0, "header.version", fmt::format("version {} (only 1 is known)", h.version));
  return h;
}

Result<std::vector<uint32_t>> read_u32_array(const ByteReader& r, uint64_t offset,
                                             uint32_t count, const char* what) {
  if (auto ok = check_array(r, offset, offset, count, 4, what); !ok)
    return tl::unexpected(ok.error());
  std::vector<uint32_t> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    auto v = r.uint_at(static_cast<size_t>(offset) + 4 * size_t{i}, 4, what);
    if (!v) return tl::unexpected(v.error());
    out.push_back(static_cast<uint32_t>(*v));
  }
  return out;
}

Result<std::vector<IndexEntry>> read_index(const ByteReader& r, const Header& h) {
  if (auto ok = check_array(r, h.index_offset, h.index_offset, h.index_count, kIndexEntrySize,
                            "index");
      !ok)
    return tl::unexpected(ok.error());
  if (h.index_count == 0)
    return r.error_at(kOffHeaderIndexCount, "header.index_count", "no index entries (not even the sentinel)");
  std::vector<IndexEntry> out;
  for (uint32_t i = 0; i < h.index_count; ++i) {
    const size_t at = h.index_offset + size_t{i} * kIndexEntrySize;
    IndexEntry e;
    e.function_offset = static_cast<uint32_t>(*r.uint_at(at, 4, "index.function_offset"));
    e.page_offset = static_cast<uint32_t>(*r.uint_at(at + kOffIndexPage, 4, "index.page_offset"));
    e.lsda_offset = static_cast<uint32_t>(*r.uint_at(at + kOffIndexLsda, 4, "index.lsda_offset"));
    out.push_back(e);
  }
  return out;
}

Result<std::vector<LsdaEntry>> read_lsdas(const ByteReader& r,
                                          const std::vector<IndexEntry>& index) {
  const uint32_t first = index.front().lsda_offset, last = index.back().lsda_offset;
  if (last < first) return {};  // the validator reports the order
  const uint32_t count = (last - first) / kLsdaEntrySize;
  if (auto ok = check_array(r, first, first, count, kLsdaEntrySize, "lsda"); !ok)
    return tl::unexpected(ok.error());
  std::vector<LsdaEntry> out;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = first + size_t{i} * kLsdaEntrySize;
    out.push_back({static_cast<uint32_t>(*r.uint_at(at, 4, "lsda.function_offset")),
                   static_cast<uint32_t>(*r.uint_at(at + kOffLsdaLsda, 4, "lsda.lsda_offset"))});
  }
  return out;
}

Result<Page> read_page(const ByteReader& r, const std::vector<IndexEntry>& index, uint32_t i,
                       const std::vector<uint32_t>& common) {
  Page p;
  p.index = i;
  p.section_offset = index[i].page_offset;
  p.base_function_offset = index[i].function_offset;
  const size_t at = p.section_offset;
  const std::string name = fmt::format("page[{}]", i);
  auto kind = r.uint_at(at, 4, name + ".kind");
  if (!kind) return tl::unexpected(kind.error());
  p.kind = static_cast<uint32_t>(*kind);
  if (p.kind != kPageKindRegular && p.kind != kPageKindCompressed)
    return r.error_at(at, name + ".kind", fmt::format("unknown page kind {}", p.kind));
  const bool compressed = p.kind == kPageKindCompressed;
  auto hdr = r.sub(at, compressed ? kCompressedPageHeaderSize : kRegularPageHeaderSize,
                   name + ".header");
  if (!hdr) return tl::unexpected(hdr.error());
  p.entries_offset = static_cast<uint16_t>(*hdr->uint_at(kOffPageEntriesOffset, 2, "entries_offset"));
  p.entry_count = static_cast<uint16_t>(*hdr->uint_at(kOffPageEntryCount, 2, "entry_count"));
  const uint32_t entry_size = compressed ? kCompressedEntrySize : kRegularEntrySize;
  if (auto ok = check_array(r, at + kOffPageEntriesOffset, uint64_t{at} + p.entries_offset,
                            p.entry_count, entry_size, name + ".entries");
      !ok)
    return tl::unexpected(ok.error());
  if (compressed) {
    p.encodings_offset = static_cast<uint16_t>(*hdr->uint_at(kOffPageEncodingsOffset, 2, "encodings_offset"));
    p.encodings_count = static_cast<uint16_t>(*hdr->uint_at(kOffPageEncodingsCount, 2, "encodings_count"));
    auto enc = read_u32_array(r, uint64_t{at} + p.encodings_offset,
                              p.encodings_count, (name + ".encodings").c_str());
    if (!enc) return tl::unexpected(enc.error());
    p.encodings = std::move(*enc);
  }
  for (uint32_t k = 0; k < p.entry_count; ++k) {
    const size_t e = at + p.entries_offset + size_t{k} * entry_size;
    PageEntry pe;
    if (compressed) {
      const auto raw = static_cast<uint32_t>(*r.uint_at(e, 4, "entry"));
      pe.function_offset = p.base_function_offset + (raw & kCompressedOffsetMask);
      pe.encoding_index = raw >> kCompressedIndexShift;
      if (pe.encoding_index < common.size()) {
        pe.encoding = common[pe.encoding_index];
      } else if (pe.encoding_index - common.size() < p.encodings.size()) {
        pe.encoding = p.encodings[pe.encoding_index - common.size()];
      } else {
        return r.error_at(e + 3, fmt::format("{}.entry[{}].encoding_index", name, k),
                          fmt::format("index {} past {} common + {} page encodings",
                                      pe.encoding_index, common.size(), p.encodings.size()));
      }
    } else {
      pe.function_offset = static_cast<uint32_t>(*r.uint_at(e, 4, "entry.function_offset"));
      pe.encoding = static_cast<uint32_t>(*r.uint_at(e + kOffRegularEntryEncoding, 4, "entry.encoding"));
    }
    p.entries.push_back(pe);
  }
  return p;
}

}  // namespace unwindkit::compact_unwind::detail
