// Every SFrame format constant, once (GNU binutils' sframe.h for v1-v3, with the corrections
// collected in shared/notes/formats.md §1). Nothing else in unwindkit spells these numbers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace unwindkit::sframe {

inline constexpr const char* kSectionName = ".sframe";

// Preamble and header (identical layout in v1, v2 and v3).
inline constexpr uint16_t kMagic = 0xdee2;
inline constexpr uint16_t kMagicSwapped = 0xe2de;  // what the magic reads as in the other order
inline constexpr size_t kHeaderSize = 28;
// Byte offsets of the header fields, for error messages that point at them.
// (kSFrameFormat.header below holds them with their names.)
inline constexpr size_t kOffVersion = 2, kOffFlags = 3, kOffAbiArch = 4, kOffAuxHdrLen = 7,
                        kOffNumFdes = 8, kOffNumFres = 12, kOffFreLen = 16, kOffFdeOff = 20,
                        kOffFreOff = 24;

inline constexpr uint8_t kVersion1 = 1;  // binutils 2.40
inline constexpr uint8_t kVersion2 = 2;  // binutils 2.41 - 2.45
inline constexpr uint8_t kVersion3 = 3;  // binutils 2.46

inline constexpr uint8_t kFlagFdeSorted = 0x1;
inline constexpr uint8_t kFlagFramePointer = 0x2;        // v1/v2 only
inline constexpr uint8_t kFlagFdeFuncStartPcrel = 0x4;   // v2 (2.45) and v3
inline constexpr uint8_t kFlagsKnownV1 = kFlagFdeSorted | kFlagFramePointer;
inline constexpr uint8_t kFlagsKnownV2 = kFlagFdeSorted | kFlagFramePointer | kFlagFdeFuncStartPcrel;
inline constexpr uint8_t kFlagsKnownV3 = kFlagFdeSorted | kFlagFdeFuncStartPcrel;

inline constexpr uint8_t kAbiAArch64Big = 1;
inline constexpr uint8_t kAbiAArch64Little = 2;
inline constexpr uint8_t kAbiAmd64Little = 3;
inline constexpr uint8_t kAbiS390xBig = 4;

// A fixed CFA-relative FP/RA offset of 0 means "not fixed: tracked per FRE".
inline constexpr int8_t kFixedOffsetNone = 0;

// FDE info byte.
inline constexpr uint8_t kInfoFreTypeMask = 0x0f;  // bits 0-3
inline constexpr uint8_t kInfoPcMask = 0x10;       // bit 4: FRE starts are a mask (PLT blocks)
inline constexpr uint8_t kInfoPauthKeyB = 0x20;    // bit 5: AArch64 PAuth key B (else A)
inline constexpr uint8_t kInfoSignal = 0x80;       // bit 7 (v3): a signal trampoline
inline constexpr uint8_t kInfoKnownV1V2 = 0x3f;
inline constexpr uint8_t kInfoKnownV3 = 0xbf;

// FRE types: the width of an FRE's start offset.
inline constexpr uint8_t kFreTypeAddr1 = 0;
inline constexpr uint8_t kFreTypeAddr2 = 1;
inline constexpr uint8_t kFreTypeAddr4 = 2;

// v3 info2 byte.
inline constexpr uint8_t kInfo2FdeTypeMask = 0x1f;  // bits 0-4
inline constexpr uint8_t kFdeTypeDefault = 0;
inline constexpr uint8_t kFdeTypeFlex = 1;

// v1 has no rep_size: its PCMASK FDEs (AMD64 .plt) repeat every 16 bytes.
inline constexpr uint8_t kRepSizeV1PcMask = 16;

// FRE info byte.
inline constexpr uint8_t kFreInfoBaseSp = 0x01;     // bit 0: CFA base register SP (else FP)
inline constexpr unsigned kFreInfoCountShift = 1;   // bits 1-4: number of data words
inline constexpr uint8_t kFreInfoCountMask = 0x0f;
inline constexpr unsigned kFreInfoSizeShift = 5;    // bits 5-6: data word size code
inline constexpr uint8_t kFreInfoSizeMask = 0x03;
inline constexpr uint8_t kFreInfoRaMangled = 0x80;  // bit 7: AArch64 PAC-signed RA
// Size codes 0/1/2 are 1/2/4-byte words; 3 is invalid.
inline constexpr uint8_t kWordSizeCodeInvalid = 3;

// Most data words a default FDE's FRE may carry, per ABI (CFA, then RA and/or FP).
inline constexpr unsigned kMaxWordsAmd64 = 2;    // CFA, FP (RA is at the fixed offset)
inline constexpr unsigned kMaxWordsAArch64 = 3;  // CFA, RA, FP
inline constexpr unsigned kMaxWordsS390x = 3;    // CFA, RA (or padding), FP

// v3 flexible-FDE control word.
inline constexpr uint32_t kFlexRegP = 0x1;    // bit 0: based on a register (else on the CFA)
inline constexpr uint32_t kFlexDerefP = 0x2;  // bit 1: the location holds the value
inline constexpr unsigned kFlexRegShift = 3;  // bits 3+: DWARF register number

// s390x: CFA offsets are stored as (offset - 160) / 8 (the caller's SP is CFA - 160:
// ArchInfo::sp_from_cfa); an FP or RA word with its low bit set (v2) names the DWARF register
// holding the value (word >> 1).
inline constexpr int64_t kS390xCfaAdjustment = 160;
inline constexpr int64_t kS390xCfaAlignment = 8;
inline constexpr int32_t kS390xRegisterFlag = 0x1;
inline constexpr int32_t kS390xRaPadding = 0;

// A flexible FRE's RA or FP slot holding one 0 word: "not described here".
inline constexpr uint32_t kFlexPadding = 0;

// What differs between the versions, in one description each (simple-frame-rs style): the
// FDE's layout and the flag and info bits the version defines. Every version's FDE index
// entry holds the function's start, size and fre_off; num_fres, info, info2 and rep_size
// follow in the entry (v1, v2) or sit in an attribute record at fre_off in the FRE
// sub-section, right before the function's first FRE (v3). Read with version_layout().
struct VersionLayout {
  uint8_t entry_size;       // bytes of one FDE index entry
  uint8_t start_width;      // the signed start field: 4 (i32) or 8 (i64)
  uint8_t size_at;          // u32 size, inside the entry
  uint8_t fre_off_at;       // u32 fre_off, inside the entry
  bool attr_in_fres;        // num_fres... in the attribute record (else in the entry)
  uint8_t attr_size;        // bytes of the attribute record before the first FRE (0: none)
  // Inside the entry or the attribute record (attr_in_fres); kAbsent: not in this version.
  uint8_t num_fres_at, num_fres_width;
  uint8_t info_at, info2_at, rep_size_at;
  uint8_t known_flags;  // sfp_flags bits the version defines
  uint8_t known_info;   // FDE info bits the version defines
};
inline constexpr uint8_t kAbsent = 0xff;

inline constexpr VersionLayout kLayoutV1 = {  // 17 bytes
    .entry_size = 17, .start_width = 4, .size_at = 4, .fre_off_at = 8,
    .attr_in_fres = false, .attr_size = 0, .num_fres_at = 12, .num_fres_width = 4,
    .info_at = 16, .info2_at = kAbsent, .rep_size_at = kAbsent,
    .known_flags = kFlagsKnownV1, .known_info = kInfoKnownV1V2};
inline constexpr VersionLayout kLayoutV2 = {  // 20 bytes: v1, u8 rep_size, 2 bytes padding
    .entry_size = 20, .start_width = 4, .size_at = 4, .fre_off_at = 8,
    .attr_in_fres = false, .attr_size = 0, .num_fres_at = 12, .num_fres_width = 4,
    .info_at = 16, .info2_at = kAbsent, .rep_size_at = 17,
    .known_flags = kFlagsKnownV2, .known_info = kInfoKnownV1V2};
inline constexpr VersionLayout kLayoutV3 = {  // 16 bytes + 5: u16 num_fres, info, info2, rep_size
    .entry_size = 16, .start_width = 8, .size_at = 8, .fre_off_at = 12,
    .attr_in_fres = true, .attr_size = 5, .num_fres_at = 0, .num_fres_width = 2,
    .info_at = 2, .info2_at = 3, .rep_size_at = 4,
    .known_flags = kFlagsKnownV3, .known_info = kInfoKnownV3};

// The layout of a known version (kVersion1..kVersion3; read_layout rejects the others).
constexpr const VersionLayout& version_layout(uint8_t version) {
  return version == kVersion1 ? kLayoutV1 : version == kVersion2 ? kLayoutV2 : kLayoutV3;
}

// CTF Frame: SFrame before its release, as binutils' V6 header patch of August 2022 describes
// it (specs/ctf-frame-v1-header-patch.txt), in a `.ctf_frame` section. No tool writes it. Its
// magic, version 1, flags, ABIs 1-3, fixed-offset "invalid" 0, FDE (17 bytes, v1's), FDE info
// bits 0-4 and FRE info bits 0-6 are SFrame's above; what differs is stated here, once.
inline constexpr const char* kCtfSectionName = ".ctf_frame";
inline constexpr size_t kCtfHeaderSize = 27;  // v1's header without sfh_auxhdr_len
inline constexpr uint8_t kCtfVersion1 = 1;    // its only version
inline constexpr uint8_t kCtfFreTypeAddr1 = 1;  // FRE types count from 1, not 0
inline constexpr uint8_t kCtfFreTypeAddr2 = 2;
inline constexpr uint8_t kCtfFreTypeAddr4 = 3;
inline constexpr uint8_t kCtfInfoKnown = 0x1f;     // FRE type, FDE type; bits 5-7 unused
inline constexpr uint8_t kCtfFreInfoKnown = 0x7f;  // bit 7 unused (SFrame's mangled-RA bit)
inline constexpr VersionLayout kLayoutCtfV1 = {  // v1's FDE
    .entry_size = 17, .start_width = 4, .size_at = 4, .fre_off_at = 8,
    .attr_in_fres = false, .attr_size = 0, .num_fres_at = 12, .num_fres_width = 4,
    .info_at = 16, .info2_at = kAbsent, .rep_size_at = kAbsent,
    .known_flags = kFlagsKnownV1, .known_info = kCtfInfoKnown};

// The two formats of the family, told apart by the section's name (or, for a bare section
// image, by detect_format() in sframe.h): they share magic and version number.
enum class Format : uint8_t { SFrame, CtfFrame };

// Where a header field sits and what the format's own header calls it (errors name it).
struct HeaderField {
  uint8_t at;
  const char* name;
};
struct HeaderLayout {
  uint8_t size;  // fixed header bytes (SFrame's aux header follows)
  HeaderField magic, version, flags, abi_arch, fixed_fp, fixed_ra;
  HeaderField auxhdr_len;  // at == kAbsent: no aux header
  HeaderField num_fdes, num_fres, fre_len, fdeoff, freoff;
};

// Everything else a reader needs to know about a format, in one description each.
struct FormatInfo {
  const char* section_name;
  const char* title;   // readelf's "Contents of the <title> section <name>:"
  const char* prefix;  // how the format's header spells constants: <prefix>_VERSION_1
  HeaderLayout header;
  uint8_t last_version;  // versions 1..last_version exist
  uint8_t last_abi;      // ABIs 1..last_abi exist
  uint8_t fre_type_addr1, fre_type_addr2, fre_type_addr4;  // FRE types of 1/2/4-byte starts
  uint8_t known_fre_info;  // FRE info bits the format defines
  // Function starts count from the section's start in both formats unless
  // kFlagFdeFuncStartPcrel is set: the CTF patch's "relative to the beginning of the current
  // FDE" is the comment released v1 kept, and formats.md says the linked sections count from
  // the section's start whatever the header comments say.
};

inline constexpr FormatInfo kSFrameFormat = {
    .section_name = kSectionName, .title = "SFrame", .prefix = "SFRAME",
    .header = {.size = kHeaderSize, .magic = {0, "sfp_magic"},
               .version = {kOffVersion, "sfp_version"}, .flags = {kOffFlags, "sfp_flags"},
               .abi_arch = {kOffAbiArch, "sfh_abi_arch"},
               .fixed_fp = {5, "sfh_cfa_fixed_fp_offset"},
               .fixed_ra = {6, "sfh_cfa_fixed_ra_offset"},
               .auxhdr_len = {kOffAuxHdrLen, "sfh_auxhdr_len"},
               .num_fdes = {kOffNumFdes, "sfh_num_fdes"}, .num_fres = {kOffNumFres, "sfh_num_fres"},
               .fre_len = {kOffFreLen, "sfh_fre_len"}, .fdeoff = {kOffFdeOff, "sfh_fdeoff"},
               .freoff = {kOffFreOff, "sfh_freoff"}},
    .last_version = kVersion3, .last_abi = kAbiS390xBig,
    .fre_type_addr1 = kFreTypeAddr1, .fre_type_addr2 = kFreTypeAddr2,
    .fre_type_addr4 = kFreTypeAddr4, .known_fre_info = 0xff};

inline constexpr FormatInfo kCtfFrameFormat = {
    .section_name = kCtfSectionName, .title = "CTF Frame", .prefix = "CTF_FRAME",
    .header = {.size = kCtfHeaderSize, .magic = {0, "ctfp_magic"},
               .version = {kOffVersion, "ctfp_version"}, .flags = {kOffFlags, "ctfp_flags"},
               .abi_arch = {kOffAbiArch, "cth_frame_abi_arch"},
               .fixed_fp = {5, "cth_cfa_fixed_fp_offset"},
               .fixed_ra = {6, "cth_cfa_fixed_ra_offset"}, .auxhdr_len = {kAbsent, ""},
               .num_fdes = {7, "cth_num_fdes"}, .num_fres = {11, "cth_num_fres"},
               .fre_len = {15, "cth_fre_len"}, .fdeoff = {19, "cth_fdeoff"},
               .freoff = {23, "cth_freoff"}},
    .last_version = kCtfVersion1, .last_abi = kAbiAmd64Little,
    .fre_type_addr1 = kCtfFreTypeAddr1, .fre_type_addr2 = kCtfFreTypeAddr2,
    .fre_type_addr4 = kCtfFreTypeAddr4, .known_fre_info = kCtfFreInfoKnown};

constexpr const FormatInfo& format_info(Format format) {
  return format == Format::CtfFrame ? kCtfFrameFormat : kSFrameFormat;
}

}  // namespace unwindkit::sframe
