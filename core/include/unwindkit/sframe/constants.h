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

// FDE layouts.
inline constexpr size_t kFdeSizeV1 = 17;  // i32 start, u32 size, u32 fre_off, u32 num_fres, u8 info
inline constexpr size_t kFdeSizeV2 = 20;  // v1 + u8 rep_size + u16 padding
inline constexpr size_t kFdeSizeV3 = 16;  // i64 start, u32 size, u32 fre_off
inline constexpr size_t kFdeAttrSizeV3 = 5;  // u16 num_fres, u8 info, u8 info2, u8 rep_size

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

// s390x: CFA offsets are stored as (offset - 160) / 8; the caller's SP is CFA - 160; an FP or
// RA word with its low bit set (v2) names the DWARF register holding the value (word >> 1).
inline constexpr int64_t kS390xCfaAdjustment = 160;
inline constexpr int64_t kS390xCfaAlignment = 8;
inline constexpr int64_t kS390xSpFromCfa = -160;
inline constexpr int32_t kS390xRegisterFlag = 0x1;
inline constexpr int32_t kS390xRaPadding = 0;

// A flexible FRE's RA or FP slot holding one 0 word: "not described here".
inline constexpr uint32_t kFlexPadding = 0;

}  // namespace unwindkit::sframe
