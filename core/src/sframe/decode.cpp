// decode(): bytes → Section. Stops at the first structural problem (anything that would make
// a later read meaningless); the finer checks are validate()'s (validate.h).
#include <algorithm>
#include <optional>

#include "read.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::sframe {

Result<Section> decode(Bytes bytes, uint64_t section_address, Format format) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const Header& h = layout->header;

  Section s;
  s.header = h;
  s.endian = layout->section.endian();
  s.address = section_address;
  s.fdes.reserve(h.num_fdes);
  // Rows carry one to three words as a rule; every word takes at least a byte, so the
  // sub-section's length bounds what an untrusted header can make this reserve.
  s.words.reserve(std::min<uint64_t>(uint64_t{h.num_fres} * 3, h.fre_len));
  for (size_t i = 0; i < h.num_fdes; ++i) {
    auto fde = detail::read_fde(layout->section, layout->fres, h, i, section_address);
    if (!fde) return tl::unexpected(fde.error());
    if (auto type = detail::check_fre_type(h, *fde, i); !type) return tl::unexpected(type.error());
    uint64_t pos = detail::first_fre_pos(h, *fde);
    // Every FRE takes at least 2 bytes: never reserve more than the sub-section can hold.
    fde->fres.reserve(std::min<uint64_t>(fde->num_fres, h.fre_len / 2));
    for (size_t j = 0; j < fde->num_fres; ++j) {
      auto fre = detail::read_fre(layout->fres, pos, fde->fre_type(), i, j, format, s.words);
      if (!fre) return tl::unexpected(fre.error());
      fde->fres.push_back(*fre);
    }
    s.fdes.push_back(std::move(*fde));
  }
  return s;
}

Result<std::vector<AddressRange>> function_ranges(Bytes bytes, uint64_t section_address,
                                                  Format format) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const Header& h = layout->header;
  std::vector<AddressRange> out;
  out.reserve(h.num_fdes);
  std::vector<int32_t> words;
  for (size_t i = 0; i < h.num_fdes; ++i) {
    auto fde = detail::read_fde(layout->section, layout->fres, h, i, section_address);
    if (!fde) return tl::unexpected(fde.error());
    if (auto type = detail::check_fre_type(h, *fde, i); !type) return tl::unexpected(type.error());
    uint64_t pos = detail::first_fre_pos(h, *fde);
    for (size_t j = 0; j < fde->num_fres; ++j) {
      words.clear();
      auto fre = detail::read_fre(layout->fres, pos, fde->fre_type(), i, j, format, words);
      if (!fre) return tl::unexpected(fre.error());
    }
    out.push_back({fde->func_start, fde->func_end()});
  }
  return out;
}

Format detect_format(Bytes bytes) {
  // Where each layout's FRE sub-section ends (FREs come last in every writer's layout).
  auto end = [&](Format format) -> std::optional<uint64_t> {
    auto endian = detail::section_endian(bytes, format);
    if (!endian) return std::nullopt;
    auto h = detail::read_header(ByteReader(bytes, *endian, kSectionName), format);
    if (!h || h->version != kVersion1) return std::nullopt;
    return h->fre_subsection() + h->fre_len;
  };
  const auto ctf = end(Format::CtfFrame);
  if (ctf == bytes.size() && end(Format::SFrame) != bytes.size()) return Format::CtfFrame;
  return Format::SFrame;
}

}  // namespace unwindkit::sframe
