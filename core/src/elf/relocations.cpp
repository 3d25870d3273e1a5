#include "relocations.h"

#include <elf.h>
#include <fmt/format.h>

namespace unwindkit::elf::detail {

namespace {

// How readelf writes one relocation type (its is_*_abs_reloc, is_*_pcrel_reloc and
// is_none_reloc tables, for the machines unwindkit reads).
enum class Kind : uint8_t { None, Absolute, PcRelative };
struct RelocType {
  uint16_t machine;
  uint32_t type;
  Kind kind;
  uint8_t width;  // bytes written (0: none)
};
constexpr RelocType kRelocTypes[] = {
    {EM_X86_64, R_X86_64_NONE, Kind::None, 0},
    {EM_X86_64, R_X86_64_64, Kind::Absolute, 8},
    {EM_X86_64, R_X86_64_32, Kind::Absolute, 4},
    {EM_X86_64, R_X86_64_32S, Kind::Absolute, 4},
    {EM_X86_64, R_X86_64_PC32, Kind::PcRelative, 4},
    {EM_X86_64, R_X86_64_PC64, Kind::PcRelative, 8},
    {EM_AARCH64, R_AARCH64_NONE, Kind::None, 0},
    {EM_AARCH64, R_AARCH64_ABS64, Kind::Absolute, 8},
    {EM_AARCH64, R_AARCH64_ABS32, Kind::Absolute, 4},
    {EM_AARCH64, R_AARCH64_PREL64, Kind::PcRelative, 8},
    {EM_AARCH64, R_AARCH64_PREL32, Kind::PcRelative, 4},
    {EM_S390, R_390_NONE, Kind::None, 0},
    {EM_S390, R_390_64, Kind::Absolute, 8},
    {EM_S390, R_390_32, Kind::Absolute, 4},
    {EM_S390, R_390_PC64, Kind::PcRelative, 8},
    {EM_S390, R_390_PC32, Kind::PcRelative, 4},
    {EM_386, R_386_NONE, Kind::None, 0},
    {EM_386, R_386_32, Kind::Absolute, 4},
    {EM_386, R_386_PC32, Kind::PcRelative, 4},
};

const RelocType* reloc_type(uint16_t machine, uint32_t type) {
  for (const RelocType& t : kRelocTypes)
    if (t.machine == machine && t.type == type) return &t;
  return nullptr;
}

// Where the fields of a relocation entry and of a symbol lie, by ELF class.
struct ClassLayout {
  uint8_t rel_size, rela_size, word;  // word: r_offset, r_info and r_addend
  uint8_t sym_size, sym_value_at, sym_value_width;
  unsigned sym_shift;   // r_info >> sym_shift: the symbol
  uint64_t type_mask;   // r_info & type_mask: the type
};
constexpr ClassLayout kElf64 = {sizeof(Elf64_Rel), sizeof(Elf64_Rela), 8, sizeof(Elf64_Sym),
                                offsetof(Elf64_Sym, st_value), 8, 32, 0xffffffff};
constexpr ClassLayout kElf32 = {sizeof(Elf32_Rel), sizeof(Elf32_Rela), 4, sizeof(Elf32_Sym),
                                offsetof(Elf32_Sym, st_value), 4, 8, 0xff};

const Section* section_at(const ElfFile& file, uint32_t index) {
  for (const Section& s : file.sections())
    if (s.index == index) return &s;
  return nullptr;
}

void put(std::vector<uint8_t>& out, size_t at, uint64_t v, size_t width, Endian endian) {
  for (size_t i = 0; i < width; ++i) {
    const size_t shift = endian == Endian::Little ? i : width - 1 - i;
    out[at + i] = static_cast<uint8_t>(v >> (8 * shift));
  }
}

// The entries of one relocation section applied to `out` (the target's bytes).
Result<void> apply_section(const ElfFile& file, const Section& rel, const Section& target,
                           std::vector<uint8_t>& out) {
  const ClassLayout& c = file.is_64() ? kElf64 : kElf32;
  const bool rela = rel.type == SHT_RELA;
  const size_t entry = rela ? c.rela_size : c.rel_size;
  if (rel.data.size() != rel.size)
    return fail(ErrorKind::Io, rel.name, 0, "section data", "the section was not read");
  if (rel.size % entry != 0)
    return fail(rel.name, 0, "sh_size",
                fmt::format("{} bytes are no whole number of {}-byte entries", rel.size, entry));
  const Section* symtab = section_at(file, rel.link);
  if (symtab == nullptr || (symtab->type != SHT_SYMTAB && symtab->type != SHT_DYNSYM))
    return fail(rel.name, 0, "sh_link", fmt::format("section {} is no symbol table", rel.link));
  const ByteReader entries(rel.data, file.endian(), rel.name);
  const ByteReader symbols(symtab->data, file.endian(), symtab->name);
  for (size_t at = 0; at < rel.data.size(); at += entry) {
    const uint64_t offset = *entries.uint_at(at, c.word, "r_offset");  // in bounds: whole entries
    const uint64_t info = *entries.uint_at(at + c.word, c.word, "r_info");
    const auto type = static_cast<uint32_t>(info & c.type_mask);
    const RelocType* t = reloc_type(file.machine(), type);
    if (t == nullptr)
      return fail(ErrorKind::Unsupported, rel.name, at, "r_info",
                  fmt::format("relocation type {} (machine {}) is not one unwind tables use",
                              type, file.machine()));
    if (t->kind == Kind::None) continue;
    if (offset > out.size() || t->width > out.size() - offset)
      return fail(rel.name, at, "r_offset",
                  fmt::format("{:#x} + {} bytes lies outside {} ({:#x} bytes)", offset, t->width,
                              target.name, out.size()));
    const uint64_t symbol = info >> c.sym_shift;
    if (symbol >= symtab->data.size() / c.sym_size)
      return fail(rel.name, at, "r_info",
                  fmt::format("symbol {} lies outside {}", symbol, symtab->name));
    const uint64_t value = *symbols.uint_at(static_cast<size_t>(symbol * c.sym_size + c.sym_value_at),
                                            c.sym_value_width, "st_value");
    // RELA: the entry's addend; REL: what the field holds (as relocated so far, as readelf
    // reads it).
    const int64_t addend =
        rela ? *entries.sint_at(at + 2 * size_t{c.word}, c.word, "r_addend")
             : ByteReader(out, file.endian(), target.name)
                   .sint_in(static_cast<size_t>(offset), t->width);
    uint64_t v = value + static_cast<uint64_t>(addend);
    if (t->kind == Kind::PcRelative) v -= offset;
    put(out, static_cast<size_t>(offset), v, t->width, file.endian());
  }
  return {};
}

}  // namespace

Result<std::optional<std::vector<uint8_t>>> apply_relocations(const ElfFile& file,
                                                              const Section& target) {
  std::optional<std::vector<uint8_t>> out;
  for (const Section& rel : file.sections()) {
    if ((rel.type != SHT_RELA && rel.type != SHT_REL) || rel.info != target.index) continue;
    if (!out) out.emplace(target.data.begin(), target.data.end());
    if (auto applied = apply_section(file, rel, target, *out); !applied)
      return tl::unexpected(applied.error());
  }
  return out;
}

}  // namespace unwindkit::elf::detail
