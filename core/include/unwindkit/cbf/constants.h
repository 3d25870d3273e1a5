// Compact Backtrace Format (Swift runtime): every constant of the format, once.
// Sources: shared/specs/compact-backtrace-format.md and shared/notes/formats.md §4 (which
// overrides the spec where Swift's code disagrees with it).
#pragma once

#include <cstdint>

namespace unwindkit::cbf {

inline constexpr const char* kSectionName = "CBF";  // names the data in Error values

// Info byte: version << 2 | size.
inline constexpr uint8_t kVersion = 0;
inline constexpr unsigned kVersionShift = 2;
inline constexpr uint8_t kSizeMask = 0x03;
inline constexpr uint8_t kSize16 = 0, kSize32 = 1, kSize64 = 2;  // 3 is reserved

// Instructions (first byte).
inline constexpr uint8_t kOpEnd = 0x00;
inline constexpr uint8_t kOpTrunc = 0x01;
// pc / ra / async: 00kk a ccc — kind in the high nibble, `a` = absolute, ccc + 1 bytes follow.
inline constexpr uint8_t kOpPc = 0x10, kOpRa = 0x20, kOpAsync = 0x30;
inline constexpr uint8_t kAddressKindMask = 0xf0;
inline constexpr uint8_t kAbsoluteBit = 0x08;
inline constexpr uint8_t kAddressCountMask = 0x07;
// omit: 01 x ccccc.
inline constexpr uint8_t kOpOmit = 0x40, kOmitMask = 0xc0;
inline constexpr uint8_t kOmitExternalBit = 0x20;
inline constexpr uint8_t kOmitCountMask = 0x1f;
// rep: 1000 x ccc.
inline constexpr uint8_t kOpRep = 0x80, kRepMask = 0xf0;
inline constexpr uint8_t kRepExternalBit = 0x08;
inline constexpr uint8_t kRepCountMask = 0x07;

// Swift's decoder refuses larger repeat counts in one `rep` (decompression-bomb guard) and
// decodes them as "truncated".
inline constexpr uint64_t kMaxRepeat = 0x100001;
// Swift's encoder: omit counts up to this go inside the instruction, larger ones after it;
// rep counts up to kMaxInternalRepeat go inside.
inline constexpr uint64_t kMaxInternalOmit = 0x1f;
inline constexpr uint64_t kMaxInternalRepeat = 8;
// External counts are read into a 64-bit word (Swift's Int): more bytes cannot be meant.
inline constexpr unsigned kMaxCountBytes = 8;

}  // namespace unwindkit::cbf
