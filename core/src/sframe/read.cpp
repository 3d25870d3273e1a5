#include "read.h"

#include <fmt/format.h>

#include <algorithm>

namespace unwindkit::sframe::detail {

Result<Endian> section_endian(Bytes bytes) {
  ByteReader r(bytes, Endian::Little, kSectionName);
  auto magic = r.u16("sfp_magic");
  if (!magic) return tl::unexpected(magic.error());
  if (*magic == kMagic) return Endian::Little;
  if (*magic == kMagicSwapped) return Endian::Big;
  return r.error_at(0, "sfp_magic", fmt::format("bad magic {:#06x} (want 0xdee2)", *magic));
}

Result<Header> read_header(const ByteReader& section) {
  ByteReader r = section;
  Header h;
  // Each read names the header field; the first short read is the Error.
#define UK_READ(dst, fn, name)    \
  do {                            \
    auto v = r.fn(name);          \
    if (!v) return tl::unexpected(v.error()); \
    dst = *v;                     \
  } while (0)
  UK_READ(h.magic, u16, "sfp_magic");
  UK_READ(h.version, u8, "sfp_version");
  UK_READ(h.flags, u8, "sfp_flags");
  UK_READ(h.abi_arch, u8, "sfh_abi_arch");
  UK_READ(h.cfa_fixed_fp_offset, i8, "sfh_cfa_fixed_fp_offset");
  UK_READ(h.cfa_fixed_ra_offset, i8, "sfh_cfa_fixed_ra_offset");
  UK_READ(h.auxhdr_len, u8, "sfh_auxhdr_len");
  UK_READ(h.num_fdes, u32, "sfh_num_fdes");
  UK_READ(h.num_fres, u32, "sfh_num_fres");
  UK_READ(h.fre_len, u32, "sfh_fre_len");
  UK_READ(h.fdeoff, u32, "sfh_fdeoff");
  UK_READ(h.freoff, u32, "sfh_freoff");
#undef UK_READ
  return h;
}

size_t fde_size(uint8_t version) {
  switch (version) {
    case kVersion1: return kFdeSizeV1;
    case kVersion2: return kFdeSizeV2;
    default: return kFdeSizeV3;
  }
}

size_t fre_start_size(uint8_t fre_type) {
  switch (fre_type) {
    case kFreTypeAddr1: return 1;
    case kFreTypeAddr2: return 2;
    case kFreTypeAddr4: return 4;
    default: return 0;
  }
}

std::string fde_field(size_t fde, std::string_view field) {
  return fmt::format("fde[{}].{}", fde, field);
}

std::string fre_field(size_t fde, size_t fre, std::string_view field) {
  return fmt::format("fde[{}].fre[{}].{}", fde, fre, field);
}

Result<Fde> read_fde(const ByteReader& section, const ByteReader& fres, const Header& header,
                     size_t index, uint64_t section_address) {
  Fde fde;
  const uint64_t at = header.fde_subsection() + index * fde_size(header.version);
  fde.start_field = at;
  ByteReader r = section;
  if (auto s = r.seek(static_cast<size_t>(std::min<uint64_t>(at, r.size() + 1)),
                      fde_field(index, "start"));
      !s)
    return tl::unexpected(s.error());
  auto get_u32 = [&](uint32_t& dst, const char* name) -> Result<void> {
    auto v = r.u32(fde_field(index, name));
    if (!v) return tl::unexpected(v.error());
    dst = *v;
    return {};
  };
  auto get_u8 = [&](uint8_t& dst, const char* name) -> Result<void> {
    auto v = r.u8(fde_field(index, name));
    if (!v) return tl::unexpected(v.error());
    dst = *v;
    return {};
  };
  if (header.version == kVersion3) {
    auto start = r.i64(fde_field(index, "start"));
    if (!start) return tl::unexpected(start.error());
    fde.start_value = *start;
  } else {
    auto start = r.i32(fde_field(index, "start"));
    if (!start) return tl::unexpected(start.error());
    fde.start_value = *start;
  }
  if (auto v = get_u32(fde.size, "size"); !v) return tl::unexpected(v.error());
  if (auto v = get_u32(fde.fre_off, "fre_off"); !v) return tl::unexpected(v.error());
  if (header.version == kVersion3) {
    // The attribute record sits in the FRE sub-section, right before the FREs.
    ByteReader a = fres;
    if (auto s = a.seek(static_cast<size_t>(std::min<uint64_t>(fde.fre_off, a.size() + 1)),
                        fde_field(index, "fre_off"));
        !s)
      return tl::unexpected(s.error());
    auto n = a.u16(fde_field(index, "num_fres"));
    if (!n) return tl::unexpected(n.error());
    fde.num_fres = *n;
    r = a;
    if (auto v = get_u8(fde.info, "info"); !v) return tl::unexpected(v.error());
    if (auto v = get_u8(fde.info2, "info2"); !v) return tl::unexpected(v.error());
    if (auto v = get_u8(fde.rep_size, "rep_size"); !v) return tl::unexpected(v.error());
  } else {
    if (auto v = get_u32(fde.num_fres, "num_fres"); !v) return tl::unexpected(v.error());
    if (auto v = get_u8(fde.info, "info"); !v) return tl::unexpected(v.error());
    if (header.version == kVersion2)
      if (auto v = get_u8(fde.rep_size, "rep_size"); !v) return tl::unexpected(v.error());
  }
  // PCREL: relative to this FDE's start field; otherwise to the section start (notes §1).
  const uint64_t base = section_address + (header.pcrel() ? at : 0);
  fde.func_start = base + static_cast<uint64_t>(fde.start_value);
  return fde;
}

uint64_t first_fre_pos(const Header& header, const Fde& fde) {
  return uint64_t{fde.fre_off} + (header.version == kVersion3 ? kFdeAttrSizeV3 : 0);
}

Result<Fre> read_fre(const ByteReader& fres, uint64_t& pos, uint8_t fre_type, size_t fde_index,
                     size_t fre_index) {
  Fre fre;
  fre.offset = fres.table_offset(0) + pos;
  const size_t start_size = fre_start_size(fre_type);
  if (start_size == 0)
    return fres.error_at(0, fde_field(fde_index, "info"),
                         fmt::format("unknown FRE type {}", fre_type));
  if (pos > fres.size())
    return fail(fres.section(), fre.offset, fre_field(fde_index, fre_index, "start"),
                "outside sfh_fre_len");
  const auto p = static_cast<size_t>(pos);
  auto start = fres.uint_at(p, start_size, fre_field(fde_index, fre_index, "start"));
  if (!start) return tl::unexpected(start.error());
  fre.start_offset = static_cast<uint32_t>(*start);
  auto info = fres.uint_at(p + start_size, 1, fre_field(fde_index, fre_index, "info"));
  if (!info) return tl::unexpected(info.error());
  fre.info = static_cast<uint8_t>(*info);
  if (fre.word_size_code() == kWordSizeCodeInvalid)
    return fres.error_at(p + start_size, fre_field(fde_index, fre_index, "info"),
                         "data word size code 3 is invalid");
  const size_t word_size = size_t{1} << fre.word_size_code();
  size_t q = p + start_size + 1;
  for (unsigned i = 0; i < fre.word_count(); ++i) {
    auto w = fres.sint_at(q, word_size,
                          fmt::format("fde[{}].fre[{}].word[{}]", fde_index, fre_index, i));
    if (!w) return tl::unexpected(w.error());
    fre.words.push_back(static_cast<int32_t>(*w));
    q += word_size;
  }
  pos = q;
  return fre;
}

}  // namespace unwindkit::sframe::detail
