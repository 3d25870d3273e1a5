// decode(): bytes → Section. Stops at the first structural problem (anything that would make
// a later read meaningless); the finer checks are validate()'s (validate.h).
#include <fmt/format.h>

#include <algorithm>

#include "read.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::sframe {

namespace {

bool known_abi(uint8_t abi) {
  return abi == kAbiAArch64Big || abi == kAbiAArch64Little || abi == kAbiAmd64Little ||
         abi == kAbiS390xBig;
}

}  // namespace

Result<Section> decode(Bytes bytes, uint64_t section_address) {
  auto endian = detail::section_endian(bytes);
  if (!endian) return tl::unexpected(endian.error());
  const ByteReader r(bytes, *endian, kSectionName);
  auto header = detail::read_header(r);
  if (!header) return tl::unexpected(header.error());
  const Header& h = *header;
  if (h.version < kVersion1 || h.version > kVersion3)
    return r.error_at(kOffVersion, "sfp_version", fmt::format("unknown version {}", h.version));
  if (!known_abi(h.abi_arch))
    return r.error_at(kOffAbiArch, "sfh_abi_arch", fmt::format("unknown ABI {}", h.abi_arch));
  if (kHeaderSize + h.auxhdr_len > bytes.size())
    return r.error_at(kOffAuxHdrLen, "sfh_auxhdr_len",
                      fmt::format("aux header of {} bytes runs past the section end",
                                  h.auxhdr_len));

  const uint64_t fde_bytes = uint64_t{h.num_fdes} * detail::fde_size(h.version);
  if (h.fde_subsection() > bytes.size() || fde_bytes > bytes.size() - h.fde_subsection())
    return r.error_at(kOffNumFdes, "sfh_num_fdes",
                      fmt::format("{} FDEs at sfh_fdeoff {:#x} run past the section end",
                                  h.num_fdes, h.fdeoff));
  if (h.fre_subsection() > bytes.size() || h.fre_len > bytes.size() - h.fre_subsection())
    return r.error_at(kOffFreLen, "sfh_fre_len",
                      fmt::format("{} bytes of FREs at sfh_freoff {:#x} run past the section end",
                                  h.fre_len, h.freoff));
  auto fres = r.sub(static_cast<size_t>(h.fre_subsection()), h.fre_len, "sfh_freoff");
  if (!fres) return tl::unexpected(fres.error());

  Section s;
  s.header = h;
  s.endian = *endian;
  s.address = section_address;
  s.fdes.reserve(h.num_fdes);
  for (size_t i = 0; i < h.num_fdes; ++i) {
    auto fde = detail::read_fde(r, *fres, h, i, section_address);
    if (!fde) return tl::unexpected(fde.error());
    uint64_t pos = detail::first_fre_pos(h, *fde);
    // Every FRE takes at least 2 bytes: never reserve more than the sub-section can hold.
    fde->fres.reserve(std::min<uint64_t>(fde->num_fres, h.fre_len / 2));
    for (size_t j = 0; j < fde->num_fres; ++j) {
      auto fre = detail::read_fre(*fres, pos, fde->fre_type(), i, j);
      if (!fre) return tl::unexpected(fre.error());
      fde->fres.push_back(std::move(*fre));
    }
    s.fdes.push_back(std::move(*fde));
  }
  return s;
}

}  // namespace unwindkit::sframe
