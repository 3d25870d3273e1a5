#include "unwindkit/sframe/elf_section.h"

namespace unwindkit::sframe {

std::optional<ElfSection> find_section(const elf::ElfFile& file) {
  for (Format format : {Format::SFrame, Format::CtfFrame})
    if (const elf::Section* s = file.section(format_info(format).section_name);
        s != nullptr && s->type != elf::kSectionNoBits)
      return ElfSection{s, format};
  return std::nullopt;
}

}  // namespace unwindkit::sframe
