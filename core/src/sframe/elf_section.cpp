#include "unwindkit/sframe/elf_section.h"

namespace unwindkit::sframe {

std::optional<ElfSection> find_section(const elf::ElfFile& file) {
  for (Format format : {Format::SFrame, Format::CtfFrame})
    if (const elf::Section* s = file.section(format_info(format).section_name);
        s != nullptr && s->type != elf::kSectionNoBits)
      return ElfSection{s, format};
  return std::nullopt;
}

Result<Bytes> section_bytes(const elf::ElfFile& file, const ElfSection& table) {
  const Bytes raw = table.section->data;
  // The version byte sits at the same place in both formats' headers.
  const bool printed_by_2_40 = table.format == Format::CtfFrame ||
                               (raw.size() > kOffVersion && raw[kOffVersion] == kVersion1);
  if (printed_by_2_40) return raw;
  return file.contents(*table.section);
}

}  // namespace unwindkit::sframe
