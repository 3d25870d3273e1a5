// Fuzzes the ELF container: headers, sections, segments, notes, symbols.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "unwindkit/elf/elf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto image = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto f = unwindkit::elf::ElfFile::parse(image, "fuzz");
  if (!f) return 0;
  size_t sum = 0;
  for (const auto& s : f->sections())
    for (uint8_t b : s.data) sum += b;  // every borrowed byte must be readable
  for (const auto& n : f->notes()) sum += n.desc.size();
  (void)f->build_id();
  (void)f->arch();
  if (auto syms = f->symbols()) sum += syms->size();
  for (const auto& seg : f->segments()) sum += f->bytes_at_address(seg.vaddr, 16).size();
  return sum == 0xdeadbeef ? 1 : 0;
}
