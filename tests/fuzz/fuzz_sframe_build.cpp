// Fuzzes `sframe build` on hostile CFI: the input is the contents of an x86_64 or AArch64
// (first byte's low bit) `.eh_frame`, placed in a minimal loadable ELF; the CFI is converted
// (FDE list, libdw rows, SFrame rows), encoded as v1, v2 and v3 for the address the new segment
// gets, validated, and written into the ELF copy. Nothing may crash or hang, and what the
// writer emits must pass our own validator.
#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "unwindkit/elf/constants.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/elf/segment_add.h"
#include "unwindkit/sframe/encode.h"
#include "unwindkit/sframe/from_cfi.h"
#include "unwindkit/sframe/validate.h"

namespace {

constexpr uint64_t kBase = 0x400000;

// ELF header, one PT_LOAD over the whole file, then .eh_frame, .shstrtab and the section
// headers (null, .eh_frame, .shstrtab).
std::vector<uint8_t> image(uint16_t machine, const uint8_t* data, size_t size) {
  static constexpr char kNames[] = "\0.eh_frame\0.shstrtab";
  const size_t eh_at = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
  const size_t names_at = eh_at + size;
  const size_t sh_at = (names_at + sizeof(kNames) + 7) & ~size_t{7};
  std::vector<uint8_t> out(sh_at + 3 * sizeof(Elf64_Shdr));
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_shoff = sh_at;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 1;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  eh.e_shstrndx = 2;
  std::memcpy(out.data(), &eh, sizeof eh);
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_vaddr = ph.p_paddr = kBase;
  ph.p_filesz = ph.p_memsz = names_at;
  ph.p_align = 0x1000;
  std::memcpy(out.data() + sizeof eh, &ph, sizeof ph);
  if (size != 0) std::memcpy(out.data() + eh_at, data, size);
  std::memcpy(out.data() + names_at, kNames, sizeof(kNames));
  Elf64_Shdr sh[3]{};
  sh[1].sh_name = 1;
  sh[1].sh_type = SHT_PROGBITS;
  sh[1].sh_flags = SHF_ALLOC;
  sh[1].sh_addr = kBase + eh_at;
  sh[1].sh_offset = eh_at;
  sh[1].sh_size = size;
  sh[1].sh_addralign = 8;
  sh[2].sh_name = 11;
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = names_at;
  sh[2].sh_size = sizeof(kNames);
  sh[2].sh_addralign = 1;
  std::memcpy(out.data() + sh_at, sh, sizeof sh);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace unwindkit;
  if (size == 0) return 0;
  const uint16_t machine = (data[0] & 1) != 0 ? EM_AARCH64 : EM_X86_64;
  auto file = elf::ElfFile::parse(
      std::make_shared<const std::vector<uint8_t>>(image(machine, data + 1, size - 1)), "fuzz");
  if (!file) return 0;
  auto plan = elf::plan_loaded_section(*file, elf::kSegmentGnuSFrame);
  if (!plan) __builtin_trap();  // the ELF above always has room
  for (uint8_t version : {sframe::kVersion1, sframe::kVersion2, sframe::kVersion3}) {
    auto conv = sframe::from_cfi(*file, version);
    if (!conv) continue;
    auto bytes = sframe::encode(conv->section, {version, version == sframe::kVersion3, plan->address});
    if (!bytes) continue;
    if (!sframe::validate(*bytes, plan->address).empty()) __builtin_trap();
    auto out = elf::add_loaded_section(*file, *plan, sframe::kSectionName,
                                       elf::kSegmentGnuSFrame, *bytes);
    if (!out) __builtin_trap();
  }
  return 0;
}
