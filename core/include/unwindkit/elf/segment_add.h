// A copy of an ELF file with one more allocated section, loaded by a segment of its own and
// named by a second program header (for .sframe: PT_GNU_SFRAME), patchelf's way: the program
// header table grows, so it moves with the new section into a new read-only PT_LOAD past
// everything loaded; PT_PHDR follows it. Nothing already loaded moves, so the program still
// runs. The new PT_LOAD keeps the first segment's offset-to-address difference, because the
// kernels before 5.18 and qemu-user compute AT_PHDR as that difference + e_phoff; it goes right
// after the loaded part of the file, and what follows (symbols, debug info) moves up. A new
// section header table (and, for a new name, a new .shstrtab) goes at the end of the file.
// ELF64 little-endian only.
#pragma once

#include <cstdint>
#include <string_view>

#include "unwindkit/bytes.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/elf/file_pieces.h"
#include "unwindkit/error.h"

namespace unwindkit::elf {

// Where the new section will be loaded; known before its bytes are (the writer of a section
// whose contents depend on its own address needs it first).
struct LoadedSectionPlan {
  uint64_t insert_at = 0;       // file offset where the loaded part of the file ends
  uint64_t segment_offset = 0;  // file offset of the new PT_LOAD (the new program headers)
  uint64_t segment_vaddr = 0;
  uint16_t phnum = 0;           // program headers after the change
  uint64_t data_offset = 0;     // file offset of the section's bytes
  uint64_t address = 0;         // their virtual address
};

// The plan for adding section `name` with a program header of type `segment_type` (reused if
// the file has one already, as is the section if it exists).
Result<LoadedSectionPlan> plan_loaded_section(const ElfFile& file, uint32_t segment_type);

// The image of `file` with `data` as section `name` where `plan` put it: pieces that refer to
// `file`'s image and to `data`, which must outlive them.
Result<FilePieces> add_loaded_section(const ElfFile& file, const LoadedSectionPlan& plan,
                                      std::string_view name, uint32_t segment_type, Bytes data);

}  // namespace unwindkit::elf
