// LLDB 19's numbering of unnamed functions (see lldb_numbered_names.h).
#include "lldb_numbered_names.h"

#include <elf.h>

#include <optional>
#include <string_view>

#include "unwindkit/bytes.h"

namespace unwindkit::debuginfo {
namespace {

uint64_t entries(const elf::Section& s) { return s.entsize == 0 ? 0 : s.size / s.entsize; }

// DT_JMPREL's address in the module's dynamic section, if it has one.
std::optional<uint64_t> jmprel(const elf::ElfFile& module) {
  const elf::Section* dynamic = module.section(".dynamic");
  if (dynamic == nullptr) return std::nullopt;
  auto bytes = module.contents(*dynamic);
  if (!bytes) return std::nullopt;
  ByteReader r(*bytes, module.endian(), ".dynamic");
  const size_t word = module.is_64() ? 8 : 4;
  while (r.remaining() >= 2 * word) {
    const auto tag = r.uint(word, "d_tag");
    const auto value = r.uint(word, "d_val");
    if (!tag || !value || *tag == DT_NULL) break;
    if (*tag == DT_JMPREL) return *value;
  }
  return std::nullopt;
}

}  // namespace

LldbNumbering::LldbNumbering(const elf::ElfFile& module) : module_(module) {
  if (const elf::Section* dynsym = module.section(".dynsym")) next_id_ += entries(*dynsym);
  if (const auto at = jmprel(module))
    for (const elf::Section& s : module.sections())
      if (s.addr == *at && (s.type == SHT_RELA || s.type == SHT_REL)) {
        next_id_ += entries(s);
        trampolines_ = entries(s) != 0;
        break;
      }
}

std::optional<uint64_t> LldbNumbering::next(uint64_t start) {
  if (trampolines_)
    for (const elf::Section& s : module_.sections())
      if (std::string_view(s.name).starts_with(".plt") && start > s.addr &&
          start < s.addr + s.size)
        return std::nullopt;
  return next_id_++;
}

}  // namespace unwindkit::debuginfo
