// The decoded SFrame section: a faithful, version-neutral copy of what the bytes say (raw
// fields kept, so the dumper and the writer can reproduce them), plus the resolved function
// start addresses. Built by `decode` (sframe.h); read by lookup, dump, json and the writer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/constants.h"

namespace unwindkit::sframe {

// [start, end) of code: a function, or where functions may lie (an ELF's executable sections).
struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;
};

struct Header {
  Format format = Format::SFrame;  // SFrame, or its pre-release CTF Frame (constants.h)
  uint16_t magic = kMagic;
  uint8_t version = 0;
  uint8_t flags = 0;
  uint8_t abi_arch = 0;
  int8_t cfa_fixed_fp_offset = 0;
  int8_t cfa_fixed_ra_offset = 0;
  uint8_t auxhdr_len = 0;
  uint32_t num_fdes = 0;
  uint32_t num_fres = 0;
  uint32_t fre_len = 0;
  uint32_t fdeoff = 0;  // from the end of header + aux header
  uint32_t freoff = 0;  // likewise

  const FormatInfo& info() const { return format_info(format); }
  const char* section_name() const { return info().section_name; }
  bool sorted() const { return (flags & kFlagFdeSorted) != 0; }
  bool pcrel() const { return (flags & kFlagFdeFuncStartPcrel) != 0; }
  // Function starts count from the FDE's start field (else from the section's start).
  // Header plus aux header: where fdeoff and freoff count from.
  uint64_t size() const { return info().header.size + uint64_t{auxhdr_len}; }
  // Byte offset of the FDE / FRE sub-sections inside the section.
  uint64_t fde_subsection() const { return size() + fdeoff; }
  uint64_t fre_subsection() const { return size() + freoff; }
};

// The FDE layout of the header's format and version.
inline const VersionLayout& version_layout(const Header& header) {
  return header.format == Format::CtfFrame ? kLayoutCtfV1 : version_layout(header.version);
}

// One frame row entry: from `start_offset` (relative to the function start; for PCMASK
// functions, inside one repetition block) up to the next row. Its data words live in the
// section's one array (Section::words), so that a row is no heap block of its own.
struct Fre {
  uint64_t offset = 0;       // byte offset of the row inside the section
  uint32_t start_offset = 0;
  uint32_t first_word = 0;   // index of its first word in Section::words
  uint8_t info = 0;

  bool base_sp() const { return (info & kFreInfoBaseSp) != 0; }
  unsigned word_count() const { return (info >> kFreInfoCountShift) & kFreInfoCountMask; }
  uint8_t word_size_code() const { return (info >> kFreInfoSizeShift) & kFreInfoSizeMask; }
  bool ra_mangled() const { return (info & kFreInfoRaMangled) != 0; }
};

struct Fde {
  int64_t start_value = 0;   // the stored start field, sign-extended
  uint64_t start_field = 0;  // byte offset of that field inside the section
  uint64_t func_start = 0;   // resolved function start address
  uint32_t size = 0;
  uint32_t fre_off = 0;  // from the FRE sub-section (v3: of the attribute record)
  uint32_t num_fres = 0;
  uint8_t info = 0;
  uint8_t info2 = 0;     // v3 only
  uint8_t rep_size = 0;  // v2/v3 only
  std::vector<Fre> fres;

  uint8_t fre_type() const { return info & kInfoFreTypeMask; }
  bool pcmask() const { return (info & kInfoPcMask) != 0; }
  bool pauth_key_b() const { return (info & kInfoPauthKeyB) != 0; }
  bool signal(uint8_t version) const { return version >= kVersion3 && (info & kInfoSignal) != 0; }
  bool flex(uint8_t version) const {
    return version >= kVersion3 && (info2 & kInfo2FdeTypeMask) == kFdeTypeFlex;
  }
  uint64_t func_end() const { return func_start + size; }
};

// The repetition block of a PCMASK function (v1 has no rep_size field).
inline uint32_t rep_size(const Header& header, const Fde& fde) {
  return header.version == kVersion1 ? kRepSizeV1PcMask : fde.rep_size;
}

struct Section {
  Header header;
  Endian endian = Endian::Little;
  uint64_t address = 0;
  std::vector<Fde> fdes;
  std::vector<int32_t> words;  // every row's data words, sign-extended, in section order

  // A row's data words.
  std::span<const int32_t> fre_words(const Fre& fre) const {
    return std::span<const int32_t>(words).subspan(fre.first_word, fre.word_count());
  }

  Arch arch() const;
  bool is_aarch64() const {
    return header.abi_arch == kAbiAArch64Big || header.abi_arch == kAbiAArch64Little;
  }
  bool is_s390x() const { return header.abi_arch == kAbiS390xBig; }
  bool ra_fixed() const { return header.cfa_fixed_ra_offset != kFixedOffsetNone; }
  bool fp_fixed() const { return header.cfa_fixed_fp_offset != kFixedOffsetNone; }
  uint32_t rep_size(const Fde& fde) const { return sframe::rep_size(header, fde); }
};

// The registers the format names (sp, fp, ra), per ABI: the architecture's row of arch.h.
const ArchInfo& abi_regs(uint8_t abi_arch);

}  // namespace unwindkit::sframe
