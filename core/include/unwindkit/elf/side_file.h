// Side-file ELF writer: a small debug file for one module, in the shape of
// `objcopy --only-keep-debug` output. It carries the module's build-id (so a debugger accepts
// it as that module's symbol file), `.symtab` names for functions the module's own symbols
// may not name, and `.debug_frame` (or `.eh_frame`) CFI (dwarf/cfi_writer.h). The module's
// allocated sections reappear as SHT_NOBITS placeholders with the same names and addresses:
// debuggers map a symbol file's symbols onto the module's sections by section name.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "unwindkit/bytes.h"

namespace unwindkit::elf {

struct SideFileSection {
  std::string name;
  uint64_t flags = 0;  // SHF_* of the module's section
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t addralign = 1;
};

struct SideFileSymbol {
  std::string name;
  uint64_t value = 0;  // the function's address in the module
  uint64_t size = 0;
};

struct SideFileSpec {
  uint16_t machine = 0;    // e_machine of the module
  uint16_t type = 0;       // e_type of the module (ET_EXEC / ET_DYN)
  Endian endian = Endian::Little;
  std::vector<uint8_t> build_id;          // NT_GNU_BUILD_ID descriptor of the module
  std::vector<SideFileSection> sections;  // the module's allocated sections
  std::vector<SideFileSymbol> functions;  // written as global STT_FUNC symbols
  std::vector<uint8_t> debug_frame;       // contents of the CFI section
  // The CFI section's name: `.eh_frame` for dwarf::write_eh_frame's bytes.
  std::string cfi_section = ".debug_frame";
  // Further non-allocated sections (.debug_info, .debug_line, ...), written as given.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> debug_sections;
};

// The bytes of a 64-bit ELF file holding `spec`. Each symbol is placed in the placeholder
// section that contains its address (SHN_ABS if none does). A placeholder named
// `.note.gnu.build-id` is replaced by the real note.
std::vector<uint8_t> write_side_file(SideFileSpec spec);

}  // namespace unwindkit::elf
