#include "read.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#define UK_INLINE __attribute__((always_inline))

namespace unwindkit::sframe::detail {

namespace {

bool known_abi(const Header& h) {
  return h.abi_arch >= kAbiAArch64Big && h.abi_arch <= h.info().last_abi;
}

bool fits(const ByteReader& r, uint64_t pos, uint64_t n) {
  return pos <= r.size() && n <= r.size() - pos;
}

}  // namespace

Result<Endian> section_endian(Bytes bytes, Format format) {
  const FormatInfo& info = format_info(format);
  ByteReader r(bytes, Endian::Little, info.section_name);
  auto magic = r.u16(info.header.magic.name);
  if (!magic) return tl::unexpected(magic.error());
  if (*magic == kMagic) return Endian::Little;
  if (*magic == kMagicSwapped) return Endian::Big;
  return r.error_at(0, info.header.magic.name,
                    fmt::format("bad magic {:#06x} (want {:#06x})", *magic, kMagic));
}

Result<Header> read_header(const ByteReader& section, Format format) {
  ByteReader r = section;
  Header h;
  h.format = format;
  const HeaderLayout& f = format_info(format).header;
  // Each read names the header field; the first short read is the Error.
#define UK_READ(dst, fn, name)    \
  do {                            \
    auto v = r.fn(name);          \
    if (!v) return tl::unexpected(v.error()); \
    dst = *v;                     \
  } while (0)
  UK_READ(h.magic, u16, f.magic.name);
  UK_READ(h.version, u8, f.version.name);
  UK_READ(h.flags, u8, f.flags.name);
  UK_READ(h.abi_arch, u8, f.abi_arch.name);
  UK_READ(h.cfa_fixed_fp_offset, i8, f.fixed_fp.name);
  UK_READ(h.cfa_fixed_ra_offset, i8, f.fixed_ra.name);
  if (f.auxhdr_len.at != kAbsent) UK_READ(h.auxhdr_len, u8, f.auxhdr_len.name);
  UK_READ(h.num_fdes, u32, f.num_fdes.name);
  UK_READ(h.num_fres, u32, f.num_fres.name);
  UK_READ(h.fre_len, u32, f.fre_len.name);
  UK_READ(h.fdeoff, u32, f.fdeoff.name);
  UK_READ(h.freoff, u32, f.freoff.name);
#undef UK_READ
  return h;
}

Result<Layout> read_layout(Bytes bytes, Format format) {
  auto endian = section_endian(bytes, format);
  if (!endian) return tl::unexpected(endian.error());
  const ByteReader r(bytes, *endian, format_info(format).section_name);
  auto header = read_header(r, format);
  if (!header) return tl::unexpected(header.error());
  const Header& h = *header;
  const HeaderLayout& f = h.info().header;
  if (h.version < kVersion1 || h.version > h.info().last_version)
    return fail(ErrorKind::Unsupported, h.section_name(), f.version.at, f.version.name,
                fmt::format("unknown version {}", h.version));
  if (!known_abi(h))
    return fail(ErrorKind::Unsupported, h.section_name(), f.abi_arch.at, f.abi_arch.name,
                fmt::format("unknown ABI {}", h.abi_arch));
  if (h.size() > bytes.size())
    return r.error_at(f.auxhdr_len.at, f.auxhdr_len.name,
                      fmt::format("aux header of {} bytes runs past the section end",
                                  h.auxhdr_len));

  const uint64_t fde_bytes = uint64_t{h.num_fdes} * version_layout(h).entry_size;
  if (h.fde_subsection() > bytes.size() || fde_bytes > bytes.size() - h.fde_subsection())
    return r.error_at(f.num_fdes.at, f.num_fdes.name,
                      fmt::format("{} FDEs at {} {:#x} run past the section end", h.num_fdes,
                                  f.fdeoff.name, h.fdeoff));
  if (h.fre_subsection() > bytes.size() || h.fre_len > bytes.size() - h.fre_subsection())
    return r.error_at(f.fre_len.at, f.fre_len.name,
                      fmt::format("{} bytes of FREs at {} {:#x} run past the section end",
                                  h.fre_len, f.freoff.name, h.freoff));
  auto fres = r.sub(static_cast<size_t>(h.fre_subsection()), h.fre_len, f.freoff.name);
  if (!fres) return tl::unexpected(fres.error());
  return Layout{r, h, *fres};
}

std::string fde_field(size_t fde, std::string_view field) {
  return fmt::format("fde[{}].{}", fde, field);
}

std::string fre_field(size_t fde, size_t fre, std::string_view field) {
  return fmt::format("fde[{}].fre[{}].{}", fde, fre, field);
}

Result<Fde> read_fde(const ByteReader& section, const ByteReader& fres, const Header& header,
                     size_t index, uint64_t section_address) {
  const VersionLayout& layout = version_layout(header);
  Fde fde;
  const uint64_t at = header.fde_subsection() + index * uint64_t{layout.entry_size};
  fde.start_field = at;
  // Each field is read where the version's layout puts it, in the order they are stored, so
  // the first one short of bytes is the Error. A field name is only needed for an Error, and
  // no read can fail when the whole record is in bounds: then the names are not formatted.
  bool whole = false;
  std::string field_name;
  // Inlined, as are the two below: called for every field of every FDE.
  auto name = [&](const char* field) UK_INLINE -> std::string_view {
    if (whole) return {};
    field_name = fde_field(index, field);
    return field_name;
  };
  // A record's position inside `in`; a position past the end is the Error seek() gives there.
  auto record_at = [&](const ByteReader& in, uint64_t pos, const char* field) UK_INLINE
      -> Result<size_t> {
    if (pos <= in.size()) return static_cast<size_t>(pos);
    ByteReader r = in;
    return tl::unexpected(r.seek(r.size() + 1, name(field)).error());
  };
  auto get = [&](const ByteReader& r, size_t record, uint8_t off, uint8_t width,
                 const char* field, auto& dst) UK_INLINE -> Result<void> {
    auto v = r.uint_at(record + off, width, name(field));
    if (!v) return tl::unexpected(v.error());
    dst = static_cast<std::remove_reference_t<decltype(dst)>>(*v);
    return {};
  };
  whole = fits(section, at, layout.entry_size);
  auto entry = record_at(section, at, "start");
  if (!entry) return tl::unexpected(entry.error());
  auto start = section.sint_at(*entry, layout.start_width, name("start"));
  if (!start) return tl::unexpected(start.error());
  fde.start_value = *start;
  if (auto v = get(section, *entry, layout.size_at, 4, "size", fde.size); !v)
    return tl::unexpected(v.error());
  if (auto v = get(section, *entry, layout.fre_off_at, 4, "fre_off", fde.fre_off); !v)
    return tl::unexpected(v.error());
  const ByteReader* attr_in = &section;
  Result<size_t> attr = entry;
  if (layout.attr_in_fres) {
    whole = fits(fres, fde.fre_off, layout.attr_size);
    attr_in = &fres;
    attr = record_at(fres, fde.fre_off, "fre_off");
    if (!attr) return tl::unexpected(attr.error());
  }
  if (auto v = get(*attr_in, *attr, layout.num_fres_at, layout.num_fres_width, "num_fres",
                   fde.num_fres);
      !v)
    return tl::unexpected(v.error());
  if (auto v = get(*attr_in, *attr, layout.info_at, 1, "info", fde.info); !v)
    return tl::unexpected(v.error());
  if (layout.info2_at != kAbsent)
    if (auto v = get(*attr_in, *attr, layout.info2_at, 1, "info2", fde.info2); !v)
      return tl::unexpected(v.error());
  if (layout.rep_size_at != kAbsent)
    if (auto v = get(*attr_in, *attr, layout.rep_size_at, 1, "rep_size", fde.rep_size); !v)
      return tl::unexpected(v.error());
  // PCREL (and CTF Frame): relative to this FDE's start field; otherwise to the section start
  // (notes §1).
  const uint64_t base = section_address + (header.pcrel() ? at : 0);
  fde.func_start = base + static_cast<uint64_t>(fde.start_value);
  return fde;
}

uint64_t fde_info_offset(const Header& header, const Fde& fde) {
  const VersionLayout& layout = version_layout(header);
  return (layout.attr_in_fres ? header.fre_subsection() + fde.fre_off : fde.start_field) +
         layout.info_at;
}

tl::unexpected<Error> unknown_fre_type(const Header& header, const Fde& fde, size_t fde_index) {
  return fail(header.section_name(), fde_info_offset(header, fde), fde_field(fde_index, "info"),
              fmt::format("unknown FRE type {}", fde.fre_type()));
}

uint64_t first_fre_pos(const Header& header, const Fde& fde) {
  return uint64_t{fde.fre_off} + version_layout(header).attr_size;
}

namespace {

// An FRE's start and info byte, and that its words are in bounds; `pos` is left at the first
// word. Field names are formatted only for the Error.
Result<Fre> read_fre_head(const ByteReader& fres, uint64_t& pos, uint8_t fre_type,
                          size_t fde_index, size_t fre_index, Format format) {
  Fre fre;
  fre.offset = fres.table_offset(0) + pos;
  const size_t start_size = fre_start_size(fre_type, format);
  if (start_size == 0)
    return fres.error_at(0, fde_field(fde_index, "info"),
                         fmt::format("unknown FRE type {}", fre_type));
  if (pos > fres.size())
    return fail(fres.section(), fre.offset, fre_field(fde_index, fre_index, "start"),
                "outside sfh_fre_len");
  const auto p = static_cast<size_t>(pos);
  const bool head = fits(fres, p, start_size + 1);
  std::string field_name;
  auto name = [&](const char* field) -> std::string_view {
    if (head) return {};
    field_name = fre_field(fde_index, fre_index, field);
    return field_name;
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

Result<Fre> read_fre_checked(const ByteReader& fres, uint64_t& pos, uint8_t fre_type,
                             size_t fde_index, size_t fre_index, Format format,
                             std::vector<int32_t>& words) {
  auto fre = read_fre_head(fres, pos, fre_type, fde_index, fre_index, format);
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

Result<Fde> read_function(const Layout& layout, size_t index, uint64_t section_address,
                          Format format, std::vector<Fre>& rows, std::vector<int32_t>& words) {
  const Header& h = layout.header;
  auto fde = read_fde(layout.section, layout.fres, h, index, section_address);
  if (!fde) return fde;
  if (auto type = check_fre_type(h, *fde, index); !type) return tl::unexpected(type.error());
  uint64_t pos = first_fre_pos(h, *fde);
  for (size_t j = 0; j < fde->num_fres; ++j) {
    auto fre = read_fre(layout.fres, pos, fde->fre_type(), index, j, format, words);
    if (!fre) return tl::unexpected(fre.error());
    rows.push_back(*fre);
  }
  return fde;
}

}  // namespace unwindkit::sframe::detail
