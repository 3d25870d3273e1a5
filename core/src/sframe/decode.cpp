// decode(): bytes → Section. Stops at the first structural problem (anything that would make
// a later read meaningless); the finer checks are validate()'s (validate.h).
#include <algorithm>

#include "read.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::sframe {

Result<Section> decode(Bytes bytes, uint64_t section_address) {
  auto layout = detail::read_layout(bytes);
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
    uint64_t pos = detail::first_fre_pos(h, *fde);
    // Every FRE takes at least 2 bytes: never reserve more than the sub-section can hold.
    fde->fres.reserve(std::min<uint64_t>(fde->num_fres, h.fre_len / 2));
    for (size_t j = 0; j < fde->num_fres; ++j) {
      auto fre = detail::read_fre(layout->fres, pos, fde->fre_type(), i, j, s.words);
      if (!fre) return tl::unexpected(fre.error());
      fde->fres.push_back(*fre);
    }
    s.fdes.push_back(std::move(*fde));
  }
  return s;
}

}  // namespace unwindkit::sframe
