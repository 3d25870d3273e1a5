// A relocatable object's relocations applied to one of its sections, as binutils' readelf
// applies them before it prints a section (readelf.c, apply_relocations): for each entry of
// every SHT_RELA / SHT_REL section whose sh_info names the section, S + A is written over the
// field, S + A - r_offset for a PC-relative type (S the symbol's st_value, A the entry's
// addend, or the field's own value in SHT_REL). The section's address, 0 in an object, takes
// no part, so that an SFrame function start comes out as readelf prints it: `.text + 0x70`
// is 0x70. Only the types unwind tables carry are applied (absolute and PC-relative 32- and
// 64-bit data, and none); any other is an Unsupported Error naming the entry.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"

namespace unwindkit::elf::detail {

// The relocated copy of `target`'s bytes; nullopt when no relocation section applies to it.
// Errors name the relocation section, the entry's byte offset in it and the field.
Result<std::optional<std::vector<uint8_t>>> apply_relocations(const ElfFile& file,
                                                              const Section& target);

}  // namespace unwindkit::elf::detail
