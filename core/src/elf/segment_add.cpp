#include "unwindkit/elf/segment_add.h"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "layout.h"

namespace unwindkit::elf {

namespace {

using layout::align_up;
using layout::kMinPage;
constexpr uint64_t kDataAlign = layout::kFileAlign;

// The ELF header and program headers, copied out of the image after bounds checks.
struct Headers {
  Elf64_Ehdr eh{};
  std::vector<Elf64_Phdr> ph;
};

Result<Headers> read_headers(const ElfFile& file) {
  if (!file.is_64() || file.endian() != Endian::Little || std::endian::native != std::endian::little)
    return fail(ErrorKind::Unsupported, "ELF", 0, "e_ident",
                "only little-endian ELF64 files get a new segment");
  const Bytes image = file.image();
  Headers h;
  if (image.size() < sizeof h.eh) return fail(ErrorKind::Truncated, "ELF", 0, "e_ident", "no ELF header");
  std::memcpy(&h.eh, image.data(), sizeof h.eh);
  if (h.eh.e_type == ET_REL)
    return fail(ErrorKind::Unsupported, "ELF", offsetof(Elf64_Ehdr, e_type), "e_type",
                "a relocatable object is not loaded: give the linked file");
  if (h.eh.e_phentsize != sizeof(Elf64_Phdr) || h.eh.e_phnum == 0 || h.eh.e_phnum == PN_XNUM)
    return fail("ELF", offsetof(Elf64_Ehdr, e_phnum), "e_phnum", "no usable program header table");
  const uint64_t size = uint64_t{h.eh.e_phnum} * sizeof(Elf64_Phdr);
  if (h.eh.e_phoff > image.size() || size > image.size() - h.eh.e_phoff)
    return fail(ErrorKind::Truncated, "ELF", offsetof(Elf64_Ehdr, e_phoff), "e_phoff",
                "program headers run past the end of the file");
  h.ph.resize(h.eh.e_phnum);
  std::memcpy(h.ph.data(), image.data() + h.eh.e_phoff, size);
  return h;
}

// The bytes of `n` headers, as the file holds them.
template <class T>
std::vector<uint8_t> as_bytes(const T* headers, size_t n) {
  const auto* b = reinterpret_cast<const uint8_t*>(headers);
  return {b, b + n * sizeof(T)};
}

bool has_segment(const Headers& h, uint32_t type) {
  return std::any_of(h.ph.begin(), h.ph.end(), [&](const Elf64_Phdr& p) { return p.p_type == type; });
}

}  // namespace

Result<LoadedSectionPlan> plan_loaded_section(const ElfFile& file, uint32_t segment_type) {
  auto h = read_headers(file);
  if (!h) return tl::unexpected(h.error());
  uint64_t page = kMinPage, end = 0, file_end = 0, delta = UINT64_MAX;
  for (const Elf64_Phdr& p : h->ph) {
    if (p.p_type != PT_LOAD) continue;
    page = std::max<uint64_t>(page, p.p_align);
    end = std::max(end, p.p_vaddr + p.p_memsz);
    file_end = std::max(file_end, p.p_offset + p.p_filesz);
    delta = std::min(delta, p.p_vaddr - p.p_offset);
  }
  if (delta == UINT64_MAX)
    return fail("ELF", h->eh.e_phoff, "program headers", "no PT_LOAD: nothing is loaded");
  if (page > layout::kMaxAlign || file_end > file.image().size())
    return fail("ELF", h->eh.e_phoff, "program headers", "segments outside the file");
  LoadedSectionPlan plan;
  const size_t added = 1 + (has_segment(*h, segment_type) ? 0 : 1);
  plan.phnum = static_cast<uint16_t>(h->ph.size() + added);
  if (plan.phnum >= PN_XNUM) return fail("ELF", offsetof(Elf64_Ehdr, e_phnum), "e_phnum", "too many program headers");
  // Right after the loaded part of the file (what is not loaded, symbols and debug info, moves
  // up) and past every loaded address, at the first segment's offset-to-address difference
  // (see the header). So placed, `strip` and `objcopy` keep the segment where it is.
  plan.insert_at = file_end;
  plan.segment_offset = align_up(std::max(file_end, align_up(end, page) - delta), page);
  plan.segment_vaddr = plan.segment_offset + delta;
  plan.data_offset = align_up(plan.segment_offset + uint64_t{plan.phnum} * sizeof(Elf64_Phdr), kDataAlign);
  plan.address = plan.segment_vaddr + (plan.data_offset - plan.segment_offset);
  return plan;
}

Result<FilePieces> add_loaded_section(const ElfFile& file, const LoadedSectionPlan& plan,
                                      std::string_view name, uint32_t segment_type, Bytes data) {
  auto h = read_headers(file);
  if (!h) return tl::unexpected(h.error());
  const Bytes image = file.image();
  Elf64_Ehdr& eh = h->eh;
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum ||
      eh.e_shoff > image.size() ||
      uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > image.size() - eh.e_shoff)
    return fail("ELF", offsetof(Elf64_Ehdr, e_shoff), "e_shoff", "no usable section header table");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), image.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));

  // Program headers: the new PT_LOAD after the last one (they stay sorted by address), the
  // section's own header after all (or the existing one, updated), PT_PHDR moved.
  const uint64_t ph_size = uint64_t{plan.phnum} * sizeof(Elf64_Phdr);
  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R;
  load.p_offset = plan.segment_offset;
  load.p_vaddr = load.p_paddr = plan.segment_vaddr;
  load.p_filesz = load.p_memsz = plan.data_offset - plan.segment_offset + data.size();
  uint64_t page = kMinPage;
  for (const Elf64_Phdr& p : h->ph)
    if (p.p_type == PT_LOAD) page = std::max<uint64_t>(page, p.p_align);
  load.p_align = page;
  Elf64_Phdr own{};
  own.p_type = segment_type;
  own.p_flags = PF_R;
  own.p_offset = plan.data_offset;
  own.p_vaddr = own.p_paddr = plan.address;
  own.p_filesz = own.p_memsz = data.size();
  own.p_align = kDataAlign;

  std::vector<Elf64_Phdr> ph;
  const auto last_load = std::find_if(h->ph.rbegin(), h->ph.rend(),
                                      [](const Elf64_Phdr& p) { return p.p_type == PT_LOAD; });
  const size_t insert_at = static_cast<size_t>(h->ph.rend() - last_load);
  bool own_done = false;
  for (size_t i = 0; i < h->ph.size(); ++i) {
    Elf64_Phdr p = h->ph[i];
    if (p.p_type == PT_PHDR) {
      p.p_offset = plan.segment_offset;
      p.p_vaddr = p.p_paddr = plan.segment_vaddr;
      p.p_filesz = p.p_memsz = ph_size;
    }
    if (p.p_type == segment_type) {
      p = own;
      own_done = true;
    }
    ph.push_back(p);
    if (i + 1 == insert_at) ph.push_back(load);
  }
  if (!own_done) ph.push_back(own);
  if (ph.size() != plan.phnum || plan.data_offset < plan.segment_offset + ph_size)
    return fail("ELF", eh.e_phoff, "program headers", "the plan does not fit this file");

  // Section headers: the named section updated or added (with its name in a new .shstrtab).
  const Elf64_Shdr& strtab = sh[eh.e_shstrndx];
  if (strtab.sh_offset > image.size() || strtab.sh_size > image.size() - strtab.sh_offset)
    return fail("ELF", eh.e_shoff, ".shstrtab", "section names run past the end of the file");
  std::vector<uint8_t> names(image.begin() + static_cast<ptrdiff_t>(strtab.sh_offset),
                             image.begin() + static_cast<ptrdiff_t>(strtab.sh_offset + strtab.sh_size));
  const Section* existing = file.section(name);
  Elf64_Shdr* target = existing != nullptr && existing->index < sh.size() ? &sh[existing->index] : nullptr;
  const bool new_names = target == nullptr;
  if (new_names) {
    Elf64_Shdr added{};
    added.sh_name = static_cast<uint32_t>(names.size());
    names.insert(names.end(), name.begin(), name.end());
    names.push_back(0);
    sh.push_back(added);
    target = &sh.back();
  }
  target->sh_type = SHT_PROGBITS;
  target->sh_flags = SHF_ALLOC;
  target->sh_addr = plan.address;
  target->sh_offset = plan.data_offset;
  target->sh_size = data.size();
  target->sh_addralign = kDataAlign;
  target->sh_link = target->sh_info = 0;
  target->sh_entsize = 0;
  if (sh.size() >= SHN_LORESERVE)
    return fail("ELF", offsetof(Elf64_Ehdr, e_shnum), "e_shnum", "too many sections");

  // The loaded part, the new segment, then the rest of the file moved up by `shift`, which
  // keeps every moved section's alignment.
  uint64_t moved_align = kDataAlign;
  for (const Elf64_Shdr& s : sh)
    if ((s.sh_flags & SHF_ALLOC) == 0 && s.sh_offset >= plan.insert_at && s.sh_addralign <= kMinPage)
      moved_align = std::max<uint64_t>(moved_align, s.sh_addralign);
  const uint64_t tail_at = align_up(plan.data_offset + data.size(), moved_align);
  const uint64_t shift = tail_at - plan.insert_at;
  for (size_t i = 0; i < sh.size(); ++i)
    if ((sh[i].sh_flags & SHF_ALLOC) == 0 && sh[i].sh_offset >= plan.insert_at &&
        &sh[i] != target && sh[i].sh_type != SHT_NOBITS)
      sh[i].sh_offset += shift;
  for (const Elf64_Phdr& p : ph)
    if (p.p_type != PT_LOAD && p.p_offset >= plan.insert_at && p.p_offset != plan.segment_offset &&
        p.p_offset != plan.data_offset && p.p_filesz != 0)
      return fail("ELF", eh.e_phoff, "program headers",
                  "a segment outside the loaded part of the file");

  if (plan.insert_at > image.size())
    return fail("ELF", eh.e_phoff, "program headers", "the plan does not fit this file");
  if (plan.insert_at < sizeof eh)
    return fail("ELF", eh.e_phoff, "program headers",
                "the loaded part of the file does not hold the ELF header");

  // Where the moved rest of the file, a new .shstrtab and the section headers go.
  const uint64_t rest_end = tail_at + (image.size() - plan.insert_at);
  const uint64_t names_end = rest_end + (new_names ? names.size() : 0);
  if (new_names) {
    sh[eh.e_shstrndx].sh_offset = rest_end;
    sh[eh.e_shstrndx].sh_size = names.size();
  }
  eh.e_shoff = align_up(names_end, kDataAlign);
  eh.e_shnum = static_cast<uint16_t>(sh.size());
  eh.e_phoff = plan.segment_offset;
  eh.e_phnum = plan.phnum;

  FilePieces out;
  out.own(as_bytes(&eh, 1));
  out.input(image.subspan(sizeof eh, plan.insert_at - sizeof eh));
  out.zeros_to(plan.segment_offset);
  out.own(as_bytes(ph.data(), ph.size()));
  out.zeros_to(plan.data_offset);
  out.input(data);
  out.zeros_to(tail_at);
  out.input(image.subspan(plan.insert_at));
  if (new_names) out.own(std::move(names));
  out.zeros_to(eh.e_shoff);
  out.own(as_bytes(sh.data(), sh.size()));
  return out;
}

}  // namespace unwindkit::elf
