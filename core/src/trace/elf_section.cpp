#include "unwindkit/trace/elf_section.h"

namespace unwindkit::trace {

Result<Bytes> section_bytes(const elf::ElfFile& file, const elf::Section& section) {
  return file.contents(section);
}

}  // namespace unwindkit::trace
