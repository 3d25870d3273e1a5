#include "read.h"

#include <fmt/format.h>

#include <algorithm>

namespace unwindkit::sframe::detail {

namespace {

bool known_abi(uint8_t abi) {
  return abi == kAbiAArch64Big || abi == kAbiAArch64Little || abi == kAbiAmd64Little ||
         abi == kAbiS390xBig;
}

bool fits(const ByteReader& r, uint64_t pos, uint64_t n) {
  return pos <= r.size() && n <= r.size() - pos;
}

}  // namespace

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

Result<Layout> read_layout(Bytes bytes) {
  auto endian = section_endian(bytes);
  if (!endian) return tl::unexpected(endian.error());
  const ByteReader r(bytes, *endian, kSectionName);
  auto header = read_header(r);
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

  const uint64_t fde_bytes = uint64_t{h.num_fdes} * fde_size(h.version);
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
  return Layout{r, h, *fres};
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
  // A field name is only needed for an Error, and no read can fail when the whole record
  // (v3: and its attribute record) is in bounds: then skip formatting the names.
  bool whole = fits(section, at, fde_size(header.version));
  auto name = [&](const char* field) { return whole ? std::string() : fde_field(index, field); };
  ByteReader r = section;
  if (auto s = r.seek(static_cast<size_t>(std::min<uint64_t>(at, r.size() + 1)), name("start"));
      !s)
    return tl::unexpected(s.error());
  auto get_u32 = [&](uint32_t& dst, const char* field) -> Result<void> {
    auto v = r.u32(name(field));
    if (!v) return tl::unexpected(v.error());
    dst = *v;
    return {};
  };
  auto get_u8 = [&](uint8_t& dst, const char* field) -> Result<void> {
    auto v = r.u8(name(field));
    if (!v) return tl::unexpected(v.error());
    dst = *v;
    return {};
  };
  if (header.version == kVersion3) {
    auto start = r.i64(name("start"));
    if (!start) return tl::unexpected(start.error());
    fde.start_value = *start;
  } else {
    auto start = r.i32(name("start"));
    if (!start) return tl::unexpected(start.error());
    fde.start_value = *start;
  }
  if (auto v = get_u32(fde.size, "size"); !v) return tl::unexpected(v.error());
  if (auto v = get_u32(fde.fre_off, "fre_off"); !v) return tl::unexpected(v.error());
  if (header.version == kVersion3) {
    // The attribute record sits in the FRE sub-section, right before the FREs.
    whole = fits(fres, fde.fre_off, kFdeAttrSizeV3);
    ByteReader a = fres;
    if (auto s = a.seek(static_cast<size_t>(std::min<uint64_t>(fde.fre_off, a.size() + 1)),
                        name("fre_off"));
        !s)
      return tl::unexpected(s.error());
    auto n = a.u16(name("num_fres"));
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

namespace {

// An FRE's start and info byte, and that its words are in bounds; `pos` is left at the first
// word. Field names are formatted only for the Error.
Result<Fre> read_fre_head(const ByteReader& fres, uint64_t& pos, uint8_t fre_type,
                          size_t fde_index, size_t fre_index) {
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
  const bool head = fits(fres, p, start_size + 1);
  auto name = [&](const char* field) {
    return head ? std::string() : fre_field(fde_index, fre_index, field);
  };
  auto start = fres.uint_at(p, start_size, name("start"));
  if (!start) return tl::unexpected(start.error());
  fre.start_offset = static_cast<uint32_t>(*start);
  auto info = fres.uint_at(p + start_size, 1, name("info"));
  if (!info) return tl::unexpected(info.error());
  fre.info = static_cast<uint8_t>(*info);
  if (fre.word_size_code() == kWordSizeCodeInvalid)
    return fres.error_at(p + start_size, fre_field(fde_index, fre_index, "info"),
                         "data word size code 3 is invalid");
  const size_t word_size = size_t{1} << fre.word_size_code();
  const size_t first = p + start_size + 1;
  if (!fits(fres, first, uint64_t{fre.word_count()} * word_size)) {
    // The first word that runs past the end is the Error, as a word-by-word read finds it.
    for (unsigned i = 0;; ++i) {
      const size_t q = first + i * word_size;
      auto w = fres.sint_at(q, word_size, fmt::format("fde[{}].fre[{}].word[{}]", fde_index,
                                                      fre_index, i));
      if (!w) return tl::unexpected(w.error());
    }
  }
  pos = first;
  return fre;
}

}  // namespace

Result<Fre> read_fre(const ByteReader& fres, uint64_t& pos, uint8_t fre_type, size_t fde_index,
                     size_t fre_index, std::vector<int32_t>& words) {
  auto fre = read_fre_head(fres, pos, fre_type, fde_index, fre_index);
  if (!fre) return fre;
  fre->first_word = static_cast<uint32_t>(words.size());
  const size_t word_size = size_t{1} << fre->word_size_code();
  for (unsigned i = 0; i < fre->word_count(); ++i) {
    // In bounds (read_fre_head checked): the name is never shown.
    auto w = fres.sint_at(static_cast<size_t>(pos), word_size, {});
    if (!w) return tl::unexpected(w.error());
    words.push_back(static_cast<int32_t>(*w));
    pos += word_size;
  }
  return fre;
}

Result<Fre> check_fre(const ByteReader& fres, uint64_t& pos, uint8_t fre_type, size_t fde_index,
                      size_t fre_index) {
  auto fre = read_fre_head(fres, pos, fre_type, fde_index, fre_index);
  if (fre) pos += uint64_t{fre->word_count()} << fre->word_size_code();
  return fre;
}

uint32_t word_bits(int32_t word, uint8_t info) {
  const unsigned bits = 8u << ((info >> kFreInfoSizeShift) & kFreInfoSizeMask);
  const auto raw = static_cast<uint32_t>(word);
  return bits >= 32 ? raw : raw & ((uint32_t{1} << bits) - 1);
}

Arch abi_arch(uint8_t abi) {
  switch (abi) {
    case kAbiAArch64Big:
    case kAbiAArch64Little: return Arch::AArch64;
    case kAbiS390xBig: return Arch::S390x;
    default: return Arch::X86_64;
  }
}

}  // namespace unwindkit::sframe::detail
