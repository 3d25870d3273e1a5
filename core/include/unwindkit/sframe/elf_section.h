// Which section of an ELF file holds its SFrame-family table: `.sframe`, else `.ctf_frame`
// (CTF Frame, SFrame's pre-release form), and so which Format its bytes are read as. Every
// reader of an ELF file's table (CLI, walker modules, side files, entry point) asks here.
#pragma once

#include <optional>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/sframe/constants.h"

namespace unwindkit::sframe {

struct ElfSection {
  const elf::Section* section = nullptr;
  Format format = Format::SFrame;
};

// The file's table section with contents (not SHT_NOBITS), or nullopt.
std::optional<ElfSection> find_section(const elf::ElfFile& file);

}  // namespace unwindkit::sframe
