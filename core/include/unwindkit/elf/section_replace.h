// A copy of an ELF file with one section's contents replaced, without moving anything that is
// loaded: the new data and a new section header table are appended to the end of the file,
// and only e_shoff changes in the ELF header. Program headers are left alone, so segments that
// covered the old bytes (PT_GNU_SFRAME for .sframe) still point at them, and the old bytes stay
// in the file and in the loaded image. Readers that go through the section headers (ours, GDB,
// readelf -S) see the new section. ELF64 only.
#pragma once

#include <cstdint>
#include <string_view>

#include "unwindkit/bytes.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/elf/file_pieces.h"
#include "unwindkit/error.h"

namespace unwindkit::elf {

// The image of `file` with section `name` now holding `data` at virtual address `address`:
// pieces that refer to `file`'s image and to `data`, which must outlive them.
Result<FilePieces> replace_section(const ElfFile& file, std::string_view name, Bytes data,
                                   uint64_t address);

// The first page-aligned address past every PT_LOAD's memory (page = the largest p_align,
// at least 4 KiB): a place where a new section cannot overlap anything loaded.
uint64_t end_of_loaded_image(const ElfFile& file);

}  // namespace unwindkit::elf
