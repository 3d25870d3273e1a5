// ELF constants (<elf.h>): every value and ELF64 field offset unwindkit acts on, defined once.
// elf_file.cpp checks each against <elf.h> when it compiles.
#pragma once

#include <cstddef>
#include <cstdint>

namespace unwindkit::elf {

// e_machine values we name (the full list is in <elf.h>; these are the ones we act on).
inline constexpr uint16_t kMachineX86_64 = 62, kMachineAArch64 = 183, kMachineS390 = 22,
                          kMachine386 = 3;
inline constexpr uint16_t kTypeRel = 1, kTypeExec = 2, kTypeDyn = 3, kTypeCore = 4;
inline constexpr uint32_t kSegmentLoad = 1, kSegmentNote = 4, kSegmentPhdr = 6,
                          kSegmentGnuSFrame = 0x6474e554;
inline constexpr uint32_t kSectionNoBits = 8;
inline constexpr uint32_t kSegmentFlagExecute = 1;  // PF_X
inline constexpr uint32_t kNoteGnuBuildId = 3;   // NT_GNU_BUILD_ID
inline constexpr uint64_t kAtPhdr = 3, kAtEntry = 9;  // auxv AT_PHDR, AT_ENTRY

// e_ident.
inline constexpr size_t kIdentClass = 4;  // EI_CLASS
inline constexpr uint8_t kClass64 = 2;    // ELFCLASS64

// Elf64_Ehdr field offsets and size.
inline constexpr size_t kEhdrSize64 = 64;
inline constexpr size_t kOffType = 16, kOffMachine = 18;  // the same in ELF32
inline constexpr size_t kOffPhoff64 = 32, kOffShoff64 = 40, kOffPhentsize64 = 54,
                        kOffPhnum64 = 56, kOffShentsize64 = 58, kOffShnum64 = 60;

// Elf64_Phdr field offsets and size.
inline constexpr size_t kPhdrSize64 = 56;
inline constexpr size_t kOffPType = 0, kOffPOffset64 = 8, kOffPFilesz64 = 32;

// Elf64_Shdr field offsets and size.
inline constexpr size_t kShdrSize64 = 64;
inline constexpr size_t kOffShAddr64 = 16, kOffShOffset64 = 24, kOffShSize64 = 32,
                        kOffShAddralign64 = 48;

}  // namespace unwindkit::elf
