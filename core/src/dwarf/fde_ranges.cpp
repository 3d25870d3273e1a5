#include "unwindkit/dwarf/fde_ranges.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fmt/format.h>
#include <libelf.h>

#include <cstring>
#include <map>
#include <string_view>

namespace unwindkit::dwarf {

namespace {

// How a CIE's FDEs store their initial_location: a DW_EH_PE_* byte (.eh_frame's 'R'
// augmentation; .debug_frame always uses absolute target-size addresses).
constexpr uint8_t kFormatMask = 0x0f, kApplyMask = 0x70;

// Width of a fixed-size DW_EH_PE format, 0 for one we do not read (LEB128, or unknown).
size_t format_width(uint8_t enc, size_t address_size) {
  switch (enc & kFormatMask) {
    case DW_EH_PE_absptr: return address_size;
    case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
    case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
    case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
    default: return 0;
  }
}

bool format_signed(uint8_t enc) { return (enc & kFormatMask & DW_EH_PE_signed) != 0; }

// The FDE pointer encoding of a `.eh_frame` CIE, from its 'z' augmentation data.
Result<uint8_t> fde_encoding(const Dwarf_CIE& cie, const ByteReader& section, uint64_t at,
                             size_t address_size) {
  const std::string_view aug = cie.augmentation ? cie.augmentation : "";
  if (aug.empty()) return uint8_t{DW_EH_PE_absptr};
  if (aug[0] != 'z')
    return section.error_at(at, "augmentation",
                            fmt::format("augmentation \"{}\" without 'z' is not read", aug));
  const Bytes data(cie.augmentation_data, cie.augmentation_data ? cie.augmentation_data_size : 0);
  ByteReader r(data, section.endian(), section.section(), at);
  for (char c : aug.substr(1)) {
    switch (c) {
      case 'R': return r.u8("augmentation R");
      case 'L': if (auto e = r.u8("augmentation L"); !e) return tl::unexpected(e.error()); break;
      case 'P': {
        auto enc = r.u8("augmentation P");
        if (!enc) return tl::unexpected(enc.error());
        const size_t w = format_width(*enc, address_size);
        if (w == 0) return r.error("augmentation P", "personality encoding not read");
        if (auto s = r.skip(w, "augmentation P"); !s) return tl::unexpected(s.error());
        break;
      }
      case 'S': case 'B': break;  // signal frame, AArch64 B key: no data
      default:
        return section.error_at(at, "augmentation",
                                fmt::format("unknown augmentation '{}' in \"{}\"", c, aug));
    }
  }
  return uint8_t{DW_EH_PE_absptr};
}

}  // namespace

Result<std::vector<FdeRange>> fde_ranges(const elf::ElfFile& file) {
  const elf::Section* sec = file.section(".eh_frame");
  bool eh = true;
  if (sec == nullptr || sec->data.empty()) {
    sec = file.section(".debug_frame");
    eh = false;
  }
  std::vector<FdeRange> out;
  if (sec == nullptr || sec->data.empty()) return out;
  const std::string name = eh ? ".eh_frame" : ".debug_frame";
  const size_t address_size = file.is_64() ? 8 : 4;
  const ByteReader section(sec->data, file.endian(), name);

  unsigned char ident[EI_NIDENT]{};
  ident[EI_CLASS] = file.is_64() ? ELFCLASS64 : ELFCLASS32;
  ident[EI_DATA] = file.endian() == Endian::Little ? ELFDATA2LSB : ELFDATA2MSB;
  Elf_Data data{};
  data.d_buf = const_cast<uint8_t*>(sec->data.data());
  data.d_size = sec->data.size();
  data.d_type = ELF_T_BYTE;
  const auto offset_of = [&](const uint8_t* p) { return static_cast<uint64_t>(p - sec->data.data()); };

  std::map<Dwarf_Off, Result<uint8_t>> encodings;  // per CIE offset
  Dwarf_Off off = 0;
  while (off < sec->data.size()) {
    Dwarf_Off next = 0;
    Dwarf_CFI_Entry entry{};
    const int rc = dwarf_next_cfi(ident, &data, eh, off, &next, &entry);
    if (rc > 0) break;  // the terminator
    if (rc < 0) return section.error_at(off, "entry", dwarf_errmsg(-1));
    if (next <= off) return section.error_at(off, "length", "entry does not advance");
    const Dwarf_Off at = off;
    off = next;
    if (dwarf_cfi_cie_p(&entry)) continue;

    const Dwarf_Off cie_off = entry.fde.CIE_pointer;
    auto found = encodings.find(cie_off);
    if (found == encodings.end()) {
      Dwarf_Off cie_next = 0;
      Dwarf_CFI_Entry cie{};
      Result<uint8_t> enc = section.error_at(at, "CIE_pointer", "no CIE at this offset");
      if (dwarf_next_cfi(ident, &data, eh, cie_off, &cie_next, &cie) == 0 &&
          dwarf_cfi_cie_p(&cie))
        enc = eh ? fde_encoding(cie.cie, section, cie_off, address_size)
                 : Result<uint8_t>(uint8_t{DW_EH_PE_absptr});
      found = encodings.emplace(cie_off, std::move(enc)).first;
    }
    if (!found->second) return tl::unexpected(found->second.error());
    const uint8_t enc = *found->second;
    const size_t width = format_width(enc, address_size);
    const uint8_t apply = enc & kApplyMask;
    if (width == 0 || (apply != DW_EH_PE_absptr && apply != DW_EH_PE_pcrel))
      return section.error_at(at, "initial_location",
                              fmt::format("pointer encoding {:#04x} is not read", enc));
    const uint64_t field = offset_of(entry.fde.start);
    // Signed or not, the value wraps the same way once added to the field's address.
    auto loc = format_signed(enc)
                   ? section.sint_at(field, width, "initial_location")
                         .map([](int64_t v) { return static_cast<uint64_t>(v); })
                   : section.uint_at(field, width, "initial_location");
    if (!loc) return tl::unexpected(loc.error());
    auto range = section.uint_at(field + width, width, "address_range");
    if (!range) return tl::unexpected(range.error());
    uint64_t start = *loc;
    if (apply == DW_EH_PE_pcrel) start += sec->addr + field;
    if (*range == 0) continue;
    if (start + *range < start)
      return section.error_at(field, "address_range", "the range wraps around");
    out.push_back({start, start + *range, name, at});
  }
  return out;
}

}  // namespace unwindkit::dwarf
