// Apple compact unwind constants (<mach-o/compact_unwind_encoding.h>, notes §2): every
// value the reader, validator, lowering and dumper use, defined once.
#pragma once

#include <cstdint>

namespace unwindkit::compact_unwind {

inline constexpr char kUnwindInfoSection[] = "__unwind_info";
inline constexpr char kCompactUnwindSection[] = "__compact_unwind";

// Encoding bits common to every architecture.
inline constexpr uint32_t kIsNotFunctionStart = 0x80000000;
inline constexpr uint32_t kHasLsda = 0x40000000;
inline constexpr uint32_t kPersonalityMask = 0x30000000;
inline constexpr unsigned kPersonalityShift = 28;
inline constexpr uint32_t kModeMask = 0x0F000000;
inline constexpr unsigned kModeShift = 24;

// x86_64 / i386.
inline constexpr uint32_t kX86ModeBpFrame = 1, kX86ModeStackImmd = 2, kX86ModeStackInd = 3,
                          kX86ModeDwarf = 4;
inline constexpr uint32_t kX86BpFrameRegisters = 0x00007FFF;
inline constexpr uint32_t kX86BpFrameOffset = 0x00FF0000;
inline constexpr unsigned kX86BpFrameOffsetShift = 16;
inline constexpr unsigned kX86BpFrameSlots = 5, kX86RegBits = 3;
inline constexpr uint32_t kX86FramelessStackSize = 0x00FF0000;
inline constexpr unsigned kX86FramelessStackSizeShift = 16;
inline constexpr uint32_t kX86FramelessStackAdjust = 0x0000E000;
inline constexpr unsigned kX86FramelessStackAdjustShift = 13;
inline constexpr uint32_t kX86FramelessRegCount = 0x00001C00;
inline constexpr unsigned kX86FramelessRegCountShift = 10;
inline constexpr uint32_t kX86FramelessPermutation = 0x000003FF;
inline constexpr uint32_t kX86DwarfSectionOffset = 0x00FFFFFF;
inline constexpr unsigned kX86MaxSavedRegs = 6;
// Compact register numbers 1..6: x86_64 rbx r12 r13 r14 r15 rbp; i386 ebx ecx edx edi esi ebp.
inline constexpr uint32_t kX86RegNone = 0, kX86RegBp = 6;

// arm64.
inline constexpr uint32_t kArm64ModeFrameless = 2, kArm64ModeDwarf = 3, kArm64ModeFrame = 4,
                          kArm64ModeFramePauthLr = 5;
inline constexpr uint32_t kArm64PairX19X20 = 0x001, kArm64PairX21X22 = 0x002,
                          kArm64PairX23X24 = 0x004, kArm64PairX25X26 = 0x008,
                          kArm64PairX27X28 = 0x010;
inline constexpr uint32_t kArm64PairD8D9 = 0x100, kArm64PairD10D11 = 0x200,
                          kArm64PairD12D13 = 0x400, kArm64PairD14D15 = 0x800;
inline constexpr uint32_t kArm64FramelessStackSize = 0x00FFF000;
inline constexpr unsigned kArm64FramelessStackSizeShift = 12;
inline constexpr unsigned kArm64StackUnit = 16;
inline constexpr uint32_t kArm64DwarfSectionOffset = 0x00FFFFFF;

// __unwind_info layout.
inline constexpr uint32_t kUnwindInfoVersion = 1;
inline constexpr uint32_t kHeaderSize = 28;
inline constexpr uint32_t kIndexEntrySize = 12;
inline constexpr uint32_t kLsdaEntrySize = 8;
// Field offsets: the header's index count; an index entry's page and LSDA offsets (after its
// function offset); an LSDA entry's LSDA offset; a page header's u16 fields (after its u32
// kind: entries offset and count, then on compressed pages encodings offset and count); a
// regular page entry's encoding (after its function offset).
inline constexpr uint32_t kOffHeaderIndexCount = 24;
inline constexpr uint32_t kOffIndexPage = 4, kOffIndexLsda = 8;
inline constexpr uint32_t kOffLsdaLsda = 4;
inline constexpr uint32_t kOffPageEntriesOffset = 4, kOffPageEntryCount = 6,
                          kOffPageEncodingsOffset = 8, kOffPageEncodingsCount = 10;
inline constexpr uint32_t kOffRegularEntryEncoding = 4;
inline constexpr uint32_t kPageKindRegular = 2, kPageKindCompressed = 3;
inline constexpr uint32_t kRegularPageHeaderSize = 8, kCompressedPageHeaderSize = 12;
inline constexpr uint32_t kRegularEntrySize = 8, kCompressedEntrySize = 4;
inline constexpr uint32_t kCompressedOffsetMask = 0x00FFFFFF;
inline constexpr unsigned kCompressedIndexShift = 24;
inline constexpr uint32_t kMaxPersonalities = 3;  // 2-bit index, 0 = none

// __LD,__compact_unwind entries in object files: pc, length u32, encoding u32, personality,
// lsda (pointer-sized pc / personality / lsda).
inline constexpr uint32_t kCompactUnwindEntrySize64 = 32, kCompactUnwindEntrySize32 = 20;

}  // namespace unwindkit::compact_unwind
