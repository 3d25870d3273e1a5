// Side-file ELF writer (see side_file.h). Layout: ELF header, the note, the CFI section, any
// further debug sections, .symtab,
// .strtab, .shstrtab, then the section header table. Constants come from glibc's <elf.h>.
#include "unwindkit/elf/side_file.h"

#include <elf.h>

#include <cstring>
#include <string_view>

namespace unwindkit::elf {
namespace {

constexpr std::string_view kBuildIdSection = ".note.gnu.build-id";
constexpr std::string_view kGnuNoteName{"GNU\0", 4};

class Out {
 public:
  explicit Out(Endian endian) : endian_(endian) {}
  std::vector<uint8_t>& bytes() { return bytes_; }
  uint64_t size() const { return bytes_.size(); }
  void uint(uint64_t v, unsigned size) {
    for (unsigned i = 0; i < size; ++i) {
      unsigned shift = endian_ == Endian::Little ? 8 * i : 8 * (size - 1 - i);
      bytes_.push_back(static_cast<uint8_t>(v >> shift));
    }
  }
  void raw(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  void align(uint64_t to) {
    while (bytes_.size() % to != 0) bytes_.push_back(0);
  }

 private:
  Endian endian_;
  std::vector<uint8_t> bytes_;
};

// A string table under construction: offset 0 is the empty string.
class StringTable {
 public:
  uint32_t add(std::string_view s) {
    auto offset = static_cast<uint32_t>(data_.size());
    data_.insert(data_.end(), s.begin(), s.end());
    data_.push_back(0);
    return offset;
  }
  const std::vector<uint8_t>& data() const { return data_; }

 private:
  std::vector<uint8_t> data_{0};
};

struct Header {
  uint32_t name = 0;
  uint32_t type = SHT_NULL;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t addralign = 0, entsize = 0;
};

void write_header(Out& out, const Header& h) {
  out.uint(h.name, 4);
  out.uint(h.type, 4);
  out.uint(h.flags, 8);
  out.uint(h.addr, 8);
  out.uint(h.offset, 8);
  out.uint(h.size, 8);
  out.uint(h.link, 4);
  out.uint(h.info, 4);
  out.uint(h.addralign, 8);
  out.uint(h.entsize, 8);
}

std::vector<uint8_t> build_id_note(const SideFileSpec& spec) {
  Out note(spec.endian);
  note.uint(kGnuNoteName.size(), 4);
  note.uint(spec.build_id.size(), 4);
  note.uint(NT_GNU_BUILD_ID, 4);
  note.raw(kGnuNoteName.data(), kGnuNoteName.size());
  note.raw(spec.build_id.data(), spec.build_id.size());
  note.align(4);
  return std::move(note.bytes());
}

}  // namespace

std::vector<uint8_t> write_side_file(SideFileSpec spec) {
  StringTable shstrtab;
  std::vector<Header> headers(1);  // [0]: SHT_NULL
  Header note_header{shstrtab.add(kBuildIdSection), SHT_NOTE, SHF_ALLOC, 0, 0, 0, 0, 0, 4, 0};
  bool note_placed = false;
  for (const SideFileSection& s : spec.sections) {
    if (s.name == kBuildIdSection) {
      note_header.addr = s.addr;
      note_header.flags = s.flags;
      note_placed = true;
      continue;
    }
    headers.push_back({shstrtab.add(s.name), SHT_NOBITS, s.flags, s.addr, 0, s.size, 0, 0,
                       s.addralign, 0});
  }
  const size_t placeholders_end = headers.size();

  // Symbols: [0] null, then every function as a global STT_FUNC.
  StringTable strtab;
  Out symtab(spec.endian);
  symtab.raw(std::vector<uint8_t>(sizeof(Elf64_Sym), 0).data(), sizeof(Elf64_Sym));
  for (const SideFileSymbol& fn : spec.functions) {
    uint16_t shndx = SHN_ABS;
    for (size_t i = 1; i < placeholders_end; ++i) {
      const Header& h = headers[i];
      if ((h.flags & SHF_EXECINSTR) && fn.value >= h.addr && fn.value < h.addr + h.size) {
        shndx = static_cast<uint16_t>(i);
        break;
      }
    }
    symtab.uint(strtab.add(fn.name), 4);
    symtab.uint(ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 1);
    symtab.uint(STV_DEFAULT, 1);
    symtab.uint(shndx, 2);
    symtab.uint(fn.value, 8);
    symtab.uint(fn.size, 8);
  }

  // The file is built around the CFI where its writer left it: a large module's CFI is tens
  // of megabytes, moved up by the few bytes of the ELF header and note in place rather than
  // copied into new memory (every new page costs a fault). Room for every section after it at
  // once (the headers and alignment are small beside them), else each doubling copies again.
  if (!note_placed) note_header.flags = 0;  // no such section in the module: not allocated
  const std::vector<uint8_t> note = build_id_note(spec);
  constexpr uint64_t kNoteAlign = 4, kCfiAlign = 8;
  static_assert(sizeof(Elf64_Ehdr) % kNoteAlign == 0);
  const uint64_t cfi_offset = (sizeof(Elf64_Ehdr) + note.size() + kCfiAlign - 1) & ~(kCfiAlign - 1);
  size_t after = symtab.bytes().size() + strtab.data().size() + 64 * (headers.size() + 8);
  for (const auto& section : spec.debug_sections) after += section.second.size();
  Out out(spec.endian);
  std::vector<uint8_t>& bytes = out.bytes();
  bytes = std::move(spec.debug_frame);
  const uint64_t cfi_size = bytes.size();
  bytes.reserve(cfi_offset + cfi_size + after);
  bytes.insert(bytes.begin(), cfi_offset, 0);
  std::copy(note.begin(), note.end(), bytes.begin() + sizeof(Elf64_Ehdr));
  note_header.offset = sizeof(Elf64_Ehdr);
  note_header.size = note.size();
  headers.push_back(note_header);
  headers.push_back({shstrtab.add(spec.cfi_section), SHT_PROGBITS, 0, 0, cfi_offset, cfi_size, 0, 0,
                     kCfiAlign, 0});
  auto place = [&out](Header h, const std::vector<uint8_t>& data, uint64_t align) {
    out.align(align);
    h.offset = out.size();
    h.size = data.size();
    out.raw(data.data(), data.size());
    return h;
  };

  for (const auto& [name, data] : spec.debug_sections)
    headers.push_back(
        place({shstrtab.add(name), SHT_PROGBITS, 0, 0, 0, 0, 0, 0, 1, 0}, data, 1));
  const auto symtab_index = static_cast<uint32_t>(headers.size());
  headers.push_back(place({shstrtab.add(".symtab"), SHT_SYMTAB, 0, 0, 0, 0, symtab_index + 1,
                           1 /* first non-local symbol */, 8, sizeof(Elf64_Sym)},
                          symtab.bytes(), 8));
  headers.push_back(
      place({shstrtab.add(".strtab"), SHT_STRTAB, 0, 0, 0, 0, 0, 0, 1, 0}, strtab.data(), 1));
  const auto shstrtab_index = static_cast<uint32_t>(headers.size());
  Header shstr{shstrtab.add(".shstrtab"), SHT_STRTAB, 0, 0, 0, 0, 0, 0, 1, 0};
  headers.push_back(place(shstr, shstrtab.data(), 1));

  out.align(8);
  const uint64_t shoff = out.size();
  for (const Header& h : headers) write_header(out, h);

  // The ELF header, written last now that the offsets are known.
  Out ehdr(spec.endian);
  const uint8_t ident[EI_NIDENT] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
                                    static_cast<uint8_t>(spec.endian == Endian::Little ? ELFDATA2LSB
                                                                                       : ELFDATA2MSB),
                                    EV_CURRENT, ELFOSABI_NONE};
  ehdr.raw(ident, sizeof ident);
  ehdr.uint(spec.type, 2);
  ehdr.uint(spec.machine, 2);
  ehdr.uint(EV_CURRENT, 4);
  ehdr.uint(0, 8);  // e_entry
  ehdr.uint(0, 8);  // e_phoff: no program headers
  ehdr.uint(shoff, 8);
  ehdr.uint(0, 4);  // e_flags
  ehdr.uint(sizeof(Elf64_Ehdr), 2);
  ehdr.uint(sizeof(Elf64_Phdr), 2);
  ehdr.uint(0, 2);  // e_phnum
  ehdr.uint(sizeof(Elf64_Shdr), 2);
  ehdr.uint(headers.size(), 2);
  ehdr.uint(shstrtab_index, 2);
  std::memcpy(out.bytes().data(), ehdr.bytes().data(), sizeof(Elf64_Ehdr));
  return std::move(out.bytes());
}

}  // namespace unwindkit::elf
