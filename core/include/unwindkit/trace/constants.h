// Intel traceback `.trace` section: every constant of the format, once.
// Sources: shared/specs/intel-traceback-trace-section.rst and shared/notes/formats.md §3
// (which overrides the spec where Intel's compilers and tools disagree with it).
#pragma once

#include <cstdint>

namespace unwindkit::trace {

inline constexpr const char* kSectionName = ".trace";

// Record tags (first byte). A 0x00 where a tag is expected is alignment padding.
inline constexpr uint8_t kTagPadding = 0x00;
inline constexpr uint8_t kTagRoutine32 = 0x02;
inline constexpr uint8_t kTagFile = 0x03;
inline constexpr uint8_t kTagLine1 = 0x04, kTagLine2 = 0x05, kTagLine4 = 0x06;
inline constexpr uint8_t kTagPc1 = 0x07, kTagPc2 = 0x08, kTagPc4 = 0x09;
inline constexpr uint8_t kTagHeader = 0x0a;
inline constexpr uint8_t kTagRoutine64 = 0x0c;
// Short-form correlations: the top two bits are the tag, the low six the PC delta - 1.
inline constexpr uint8_t kCoTagMask = 0xc0;
inline constexpr uint8_t kTagCo1 = 0x80;  // line + 1
inline constexpr uint8_t kTagCo2 = 0xc0;  // + i8 line delta
inline constexpr uint8_t kCoPcMask = 0x3f;
inline constexpr uint64_t kCoMaxPcDelta = 64;

// HDR: u8 tag, u16 major, u8 minor, u32 size, uP code begin, u32 file count, u32 code size,
// u16 module-name length + bytes, then per file u16 length + bytes.
inline constexpr uint16_t kMajorVersion = 2;
inline constexpr uint8_t kMinorVersion = 0;
// RTN32 / RTN64: u8 tag, u8 pad (0), u16 name length, u32 / u64 start PC, name bytes.
inline constexpr uint8_t kRoutinePad = 0;
inline constexpr unsigned kRoutine32Align = 4, kRoutine64Align = 8;

// Record-name strings of Intel's `llvm-objdump --traceback`.
inline constexpr const char* kDumpTitle = ".trace contents:";

}  // namespace unwindkit::trace
