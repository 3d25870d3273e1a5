// A minimal loadable ELF64 (little-endian) holding given sections, for unit tests and fuzz
// harnesses that hand libelf/libdw bytes of their own making: the ELF header, one PT_LOAD
// from kImageBase over the headers and every section's bytes, the bytes of each section in
// the order given (unaligned, from kImageHeaders on, each at kImageBase + its file offset),
// then .shstrtab and the section headers. As a relocatable object (ET_REL): no program
// header, and every section at address 0, as in a compiler's object.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace unwindkit::test {

inline constexpr uint64_t kImageBase = 0x400000;
inline constexpr size_t kImageHeaders = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);

struct ImageSection {
  std::string_view name;
  std::span<const uint8_t> bytes;
  uint32_t type = SHT_PROGBITS;  // SHT_PROGBITS sections are SHF_ALLOC
  uint32_t link = 0;             // sh_link and sh_info: section header indices (1-based)
  uint32_t info = 0;
  uint64_t entsize = 0;
};

// `listed`: the order of the sections' headers after the null one, as indices into
// `sections` (empty: the order given); .shstrtab's comes last.
inline std::vector<uint8_t> elf_image(uint16_t machine, std::span<const ImageSection> sections,
                                      std::span<const size_t> listed = {},
                                      uint16_t elf_type = ET_EXEC) {
  const bool object = elf_type == ET_REL;
  std::string names(1, '\0');
  std::vector<uint32_t> name_at;
  for (const ImageSection& s : sections) {
    name_at.push_back(static_cast<uint32_t>(names.size()));
    names.append(s.name).push_back('\0');
  }
  const auto shstrtab_name = static_cast<uint32_t>(names.size());
  names.append(".shstrtab").push_back('\0');
  std::vector<size_t> data_at;
  size_t at = kImageHeaders;
  for (const ImageSection& s : sections) {
    data_at.push_back(at);
    at += s.bytes.size();
  }
  const size_t names_at = at;
  const size_t sh_at = (names_at + names.size() + 7) & ~size_t{7};
  const size_t count = sections.size() + 2;
  std::vector<uint8_t> out(sh_at + count * sizeof(Elf64_Shdr));

  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = elf_type;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = object ? 0 : sizeof(Elf64_Ehdr);
  eh.e_shoff = sh_at;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = object ? 0 : 1;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = static_cast<uint16_t>(count);
  eh.e_shstrndx = static_cast<uint16_t>(count - 1);
  std::memcpy(out.data(), &eh, sizeof eh);
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_vaddr = ph.p_paddr = kImageBase;
  ph.p_filesz = ph.p_memsz = names_at;
  ph.p_align = 0x1000;
  std::memcpy(out.data() + sizeof eh, &ph, sizeof ph);
  for (size_t i = 0; i < sections.size(); ++i)
    if (!sections[i].bytes.empty())
      std::memcpy(out.data() + data_at[i], sections[i].bytes.data(), sections[i].bytes.size());
  std::memcpy(out.data() + names_at, names.data(), names.size());

  std::vector<Elf64_Shdr> sh(count);
  for (size_t n = 0; n < sections.size(); ++n) {
    const size_t i = listed.empty() ? n : listed[n];
    Elf64_Shdr& s = sh[n + 1];
    s.sh_name = name_at[i];
    s.sh_type = sections[i].type;
    s.sh_flags = sections[i].type == SHT_PROGBITS ? SHF_ALLOC : 0;
    s.sh_addr = object ? 0 : kImageBase + data_at[i];
    s.sh_link = sections[i].link;
    s.sh_info = sections[i].info;
    s.sh_entsize = sections[i].entsize;
    s.sh_offset = data_at[i];
    s.sh_size = sections[i].bytes.size();
    s.sh_addralign = 1;
  }
  Elf64_Shdr& strtab = sh[count - 1];
  strtab.sh_name = shstrtab_name;
  strtab.sh_type = SHT_STRTAB;
  strtab.sh_offset = names_at;
  strtab.sh_size = names.size();
  strtab.sh_addralign = 1;
  std::memcpy(out.data() + sh_at, sh.data(), count * sizeof(Elf64_Shdr));
  return out;
}

}  // namespace unwindkit::test
