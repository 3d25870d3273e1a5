// Which bytes of an ELF file's `.trace` every reader decodes (the CLI's trace and dump
// commands, GDB's plugin).
#pragma once

#include <optional>

#include "unwindkit/bytes.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"

namespace unwindkit::trace {

// The section's bytes as `readelf --relocated-dump=.trace` shows them: in a relocatable
// object each HDR's base PC and each RTN's start PC is an address field the compiler leaves
// to a relocation (an absolute R_X86_64_64 or R_386_32 against the routine's section, whose
// address in an object is 0), so they are read with the object's relocations applied
// (ElfFile::contents); elsewhere the section's own bytes.
Result<Bytes> section_bytes(const elf::ElfFile& file, const elf::Section& section);

}  // namespace unwindkit::trace
