// Mach-O container constants (<mach-o/loader.h>, <mach-o/fat.h>, <mach-o/nlist.h>): every
// value this reader acts on, defined once.
#pragma once

#include <cstdint>

namespace unwindkit::macho {

// Magic numbers as read in the file's own byte order (thin) or big-endian (fat).
inline constexpr uint32_t kMagic32 = 0xfeedface, kMagic64 = 0xfeedfacf;
inline constexpr uint32_t kCigam32 = 0xcefaedfe, kCigam64 = 0xcffaedfe;
inline constexpr uint32_t kFatMagic = 0xcafebabe, kFatMagic64 = 0xcafebabf;

inline constexpr uint32_t kCpuArchAbi64 = 0x01000000;
inline constexpr uint32_t kCpuTypeX86 = 7, kCpuTypeX86_64 = 7 | kCpuArchAbi64;
inline constexpr uint32_t kCpuTypeArm = 12, kCpuTypeArm64 = 12 | kCpuArchAbi64;

inline constexpr uint32_t kFileTypeObject = 1, kFileTypeExecute = 2, kFileTypeDylib = 6,
                          kFileTypeBundle = 8;

inline constexpr uint32_t kLcSegment = 0x1, kLcSymtab = 0x2, kLcSegment64 = 0x19, kLcUuid = 0x1b;

// Field offsets the readers point errors at: mach_header's cputype, fat_header's nfat_arch.
inline constexpr uint32_t kOffCpuType = 4, kOffFatNArch = 4;

// Header, load command and record sizes.
inline constexpr uint32_t kHeaderSize32 = 28, kHeaderSize64 = 32;
inline constexpr uint32_t kLoadCommandHeaderSize = 8;
inline constexpr uint32_t kSegmentCommandSize32 = 56, kSegmentCommandSize64 = 72;
inline constexpr uint32_t kSectionSize32 = 68, kSectionSize64 = 80;
inline constexpr uint32_t kFatHeaderSize = 8, kFatArchSize32 = 20, kFatArchSize64 = 32;
inline constexpr uint32_t kNlistSize32 = 12, kNlistSize64 = 16;
inline constexpr uint32_t kRelocationSize = 8;
inline constexpr uint32_t kNameSize = 16;  // segname / sectname

// nlist n_type bits.
inline constexpr uint8_t kNlistStabMask = 0xe0, kNlistTypeMask = 0x0e, kNlistTypeSect = 0x0e;

// relocation_info: r_address's top bit marks a scattered relocation; second word packs
// r_symbolnum:24, r_pcrel:1, r_length:2, r_extern:1, r_type:4 (little-endian bit order).
inline constexpr uint32_t kRelocScattered = 0x80000000, kRelocSymbolNumMask = 0x00ffffff;
inline constexpr uint32_t kRelocExternBit = 1u << 27;
inline constexpr uint32_t kScatteredAddressMask = 0x00ffffff;

inline constexpr uint8_t kSectionTypeMask = 0xff;
inline constexpr uint32_t kSectionTypeZeroFill = 0x1;

}  // namespace unwindkit::macho
