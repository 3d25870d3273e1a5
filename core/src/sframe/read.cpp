#include "read.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

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
    return fail(ErrorKind::Unsupported, kSectionName, kOffVersion, "sfp_version",
                fmt::format("unknown version {}", h.version));
  if (!known_abi(h.abi_arch))
    return fail(ErrorKind::Unsupported, kSectionName, kOffAbiArch, "sfh_abi_arch",
                fmt::format("unknown ABI {}", h.abi_arch));
  if (kHeaderSize + h.auxhdr_len > bytes.size())
    return r.error_at(kOffAuxHdrLen, "sfh_auxhdr_len",
                      fmt::format("aux header of {} bytes runs past the section end",
                                  h.auxhdr_len));

  const uint64_t fde_bytes = uint64_t{h.num_fdes} * version_layout(h.version).entry_size;
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
  const VersionLayout& layout = version_layout(header.version);
  Fde fde;
  const uint64_t at = header.fde_subsection() + index * uint64_t{layout.entry_size};
  fde.start_field = at;
  // Each field is read where the version's layout puts it, in the order they are stored, so
  // the first one short of bytes is the Error. A field name is only needed for an Error, and
  // no read can fail when the whole record is in bounds: then the names are not formatted.
  bool whole = false;
  auto name = [&](const char* field) { return whole ? std::string() : fde_field(index, field); };
  // A reader positioned at `pos` (a position past the end is the Error for `field`).
  auto at_pos = [&](const ByteReader& in, uint64_t pos, const char* field) -> Result<ByteReader> {
    ByteReader r = in;
    if (auto s = r.seek(static_cast<size_t>(std::min<uint64_t>(pos, r.size() + 1)), name(field));
        !s)
      return tl::unexpected(s.error());
    return r;
  };
  auto get = [&](const ByteReader& r, uint8_t off, uint8_t width, const char* field,
                 auto& dst) -> Result<void> {
    auto v = r.uint_at(r.pos() + off, width, name(field));
    if (!v) return tl::unexpected(v.error());
    dst = static_cast<std::remove_reference_t<decltype(dst)>>(*v);
    return {};
  };
  whole = fits(section, at, layout.entry_size);
  auto entry = at_pos(section, at, "start");
  if (!entry) return tl::unexpected(entry.error());
  auto start = entry->sint_at(entry->pos(), layout.start_width, name("start"));
  if (!start) return tl::unexpected(start.error());
  fde.start_value = *start;
  if (auto v = get(*entry, layout.size_at, 4, "size", fde.size); !v)
    return tl::unexpected(v.error());
  if (auto v = get(*entry, layout.fre_off_at, 4, "fre_off", fde.fre_off); !v)
    return tl::unexpected(v.error());
  Result<ByteReader> attr = *entry;
  if (layout.attr_in_fres) {
    whole = fits(fres, fde.fre_off, layout.attr_size);
    attr = at_pos(fres, fde.fre_off, "fre_off");
    if (!attr) return tl::unexpected(attr.error());
  }
  if (auto v = get(*attr, layout.num_fres_at, layout.num_fres_width, "num_fres", fde.num_fres);
      !v)
    return tl::unexpected(v.error());
  if (auto v = get(*attr, layout.info_at, 1, "info", fde.info); !v)
    return tl::unexpected(v.error());
  if (layout.info2_at != kAbsent)
    if (auto v = get(*attr, layout.info2_at, 1, "info2", fde.info2); !v)
      return tl::unexpected(v.error());
  if (layout.rep_size_at != kAbsent)
    if (auto v = get(*attr, layout.rep_size_at, 1, "rep_size", fde.rep_size); !v)
      return tl::unexpected(v.error());
  // PCREL: relative to this FDE's start field; otherwise to the section start (notes §1).
  const uint64_t base = section_address + (header.pcrel() ? at : 0);
  fde.func_start = base + static_cast<uint64_t>(fde.start_value);
  return fde;
}

uint64_t first_fre_pos(const Header& header, const Fde& fde) {
  return uint64_t{fde.fre_off} + version_layout(header.version).attr_size;
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
