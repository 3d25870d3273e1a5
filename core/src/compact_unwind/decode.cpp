#include "read.h"
#include "unwindkit/compact_unwind/unwind_info.h"

namespace unwindkit::compact_unwind {

Result<UnwindInfo> decode_unwind_info(Bytes section) {
  const ByteReader r = detail::section_reader(section);
  UnwindInfo info;
  auto h = detail::read_header(r);
  if (!h) return tl::unexpected(h.error());
  info.header = *h;
  auto common = detail::read_u32_array(r, h->common_encodings_offset, h->common_encodings_count,
                                       "common_encodings");
  if (!common) return tl::unexpected(common.error());
  info.common_encodings = std::move(*common);
  auto pers = detail::read_u32_array(r, h->personalities_offset, h->personalities_count,
                                     "personalities");
  if (!pers) return tl::unexpected(pers.error());
  info.personalities = std::move(*pers);
  auto index = detail::read_index(r, *h);
  if (!index) return tl::unexpected(index.error());
  info.index = std::move(*index);
  auto lsdas = detail::read_lsdas(r, info.index);
  if (!lsdas) return tl::unexpected(lsdas.error());
  info.lsdas = std::move(*lsdas);
  // Pages up to the sentinel (page offset 0), as the linker and llvm-objdump walk them.
  for (uint32_t i = 0; i + 1 < info.index.size() && info.index[i].page_offset != 0; ++i) {
    auto page = detail::read_page(r, info.index, i, info.common_encodings);
    if (!page) return tl::unexpected(page.error());
    info.pages.push_back(std::move(*page));
  }
  return info;
}

}  // namespace unwindkit::compact_unwind
