// Which section of an ELF file holds its SFrame-family table: `.sframe`, else `.ctf_frame`
// (CTF Frame, SFrame's pre-release form), and so which Format its bytes are read as. Every
// reader of an ELF file's table (CLI, walker modules, side files, entry point) asks here.
#pragma once

#include <optional>

#include "unwindkit/bytes.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"
#include "unwindkit/sframe/constants.h"

namespace unwindkit::sframe {

struct ElfSection {
  const elf::Section* section = nullptr;
  Format format = Format::SFrame;
};

// The file's table section with contents (not SHT_NOBITS), or nullopt.
std::optional<ElfSection> find_section(const elf::ElfFile& file);

// The table's bytes as readelf prints them, which every reader of a file's table reads: in a
// relocatable object, where each function start is a relocation (`.rela.sframe`), relocated
// as readelf 2.41 and later relocate them (ElfFile::contents), except a v1 or CTF Frame
// section's, which binutils 2.40's readelf (the last to print them) reads unrelocated.
// Elsewhere the section's own bytes.
Result<Bytes> section_bytes(const elf::ElfFile& file, const ElfSection& table);

}  // namespace unwindkit::sframe
