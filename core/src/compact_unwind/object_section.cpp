#include "unwindkit/compact_unwind/object_section.h"

#include <fmt/format.h>

#include <map>

#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/encoding.h"

namespace unwindkit::compact_unwind {

namespace {

uint32_t entry_size(const macho::Slice& slice) {
  return slice.is_64() ? kCompactUnwindEntrySize64 : kCompactUnwindEntrySize32;
}

// Symbols defined in a section, by address; the first one in symbol-table order wins a tie
// (llvm-objdump's choice, which prefers local labels such as ltmp0: they come first).
std::map<uint64_t, const macho::Symbol*> symbols_by_address(const macho::Slice& slice) {
  std::map<uint64_t, const macho::Symbol*> out;
  for (const auto& s : slice.symbols())
    if (s.sect != 0 && s.sect <= slice.sections().size()) out.emplace(s.value, &s);
  return out;
}

RelocTarget name_target(const macho::Slice& slice,
                        const std::map<uint64_t, const macho::Symbol*>& symbols,
                        const macho::Relocation& rel, uint64_t value) {
  if (rel.is_extern) {
    const auto& syms = slice.symbols();
    return {rel.symbolnum < syms.size() ? syms[rel.symbolnum].name : std::string(), value};
  }
  // Section-relative: the relocated section is the 1-based ordinal r_symbolnum.
  const macho::Section* sect = nullptr;
  if (!rel.scattered && rel.symbolnum >= 1 && rel.symbolnum <= slice.sections().size())
    sect = &slice.sections()[rel.symbolnum - 1];
  const uint64_t sect_addr = sect ? sect->addr : 0;
  const std::string sect_name = sect ? sect->sectname : std::string();
  auto it = symbols.upper_bound(value);
  if (it == symbols.begin()) return {sect_name, value - sect_addr};
  --it;
  if (sect && it->second->sect == rel.symbolnum) return {it->second->name, value - it->first};
  return {sect_name, value - sect_addr};
}

}  // namespace

Result<std::vector<ObjectEntry>> decode_object_section(const macho::Slice& slice,
                                                       const macho::Section& section) {
  const uint32_t size = entry_size(slice);
  const size_t ptr = slice.is_64() ? 8 : 4;
  ByteReader r(section.data, slice.endian(), kCompactUnwindSection);
  std::vector<ObjectEntry> out;
  while (!r.at_end()) {
    ObjectEntry e;
    e.offset = static_cast<uint32_t>(r.pos());
    if (r.remaining() < size)
      return r.error("entry", fmt::format("{} trailing bytes, entries are {} bytes",
                                          r.remaining(), size));
    e.function = *r.uint(ptr, "start");
    e.length = *r.u32("length");
    e.encoding = *r.u32("compact encoding");
    e.personality = *r.uint(ptr, "personality");
    e.lsda = *r.uint(ptr, "lsda");
    out.push_back(std::move(e));
  }
  const auto symbols = symbols_by_address(slice);
  for (const auto& rel : section.relocations) {
    const uint32_t index = rel.address / size, in_entry = rel.address % size;
    if (index >= out.size())
      return fail(kCompactUnwindSection, rel.address, "relocation",
                  fmt::format("relocation at {:#x} is past the last entry", rel.address));
    ObjectEntry& e = out[index];
    if (in_entry == 0) {
      e.function_target = name_target(slice, symbols, rel, e.function);
    } else if (in_entry == ptr + 8) {
      e.personality_target = name_target(slice, symbols, rel, e.personality);
    } else if (in_entry == 2 * ptr + 8) {
      e.lsda_target = name_target(slice, symbols, rel, e.lsda);
    } else {
      return fail(kCompactUnwindSection, rel.address, "relocation",
                  fmt::format("relocation at entry offset {} (not start, personality or lsda)",
                              in_entry));
    }
  }
  return out;
}

std::vector<Error> validate_object_section(const macho::Slice& slice,
                                           const macho::Section& section) {
  auto entries = decode_object_section(slice, section);
  if (!entries) return {entries.error()};
  std::vector<Error> errors;
  const auto arch = slice.arch();
  if (!arch) return {Error{kCompactUnwindSection, 0, "cputype", "unknown architecture"}};
  for (const auto& e : *entries) {
    auto d = decode_encoding(*arch, e.encoding);
    if (!d)
      errors.push_back(Error{kCompactUnwindSection, e.offset + (slice.is_64() ? 12u : 8u),
                             "compact encoding",
                             fmt::format("{:#010x}: {}: {}", e.encoding, d.error().field,
                                         d.error().message)});
  }
  return errors;
}

}  // namespace unwindkit::compact_unwind
