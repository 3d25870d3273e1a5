#include "unwindkit/macho/macho_file.h"

#include <fmt/format.h>

#include <cstring>

#include "unwindkit/file_bytes.h"
#include "unwindkit/macho/constants.h"

namespace unwindkit::macho {

namespace {

constexpr std::string_view kContainer = "Mach-O";

// A fixed 16-byte name field, NUL-padded (not necessarily NUL-terminated).
Result<std::string> read_name(ByteReader& r, std::string_view field) {
  auto b = r.bytes(kNameSize, field);
  if (!b) return tl::unexpected(b.error());
  size_t n = 0;
  while (n < b->size() && (*b)[n] != 0) ++n;
  return std::string(reinterpret_cast<const char*>(b->data()), n);
}

// Width-dependent address field (u32 in 32-bit files, u64 in 64-bit ones).
Result<uint64_t> read_word(ByteReader& r, bool is_64, std::string_view field) {
  return r.uint(is_64 ? 8 : 4, field);
}

#define UK_CHECK(expr)                                           \
  if (auto check_r = (expr); !check_r) return tl::unexpected(check_r.error())

#define UK_TRY(var, expr)                                   \
  auto var##_r = (expr);                                    \
  if (!var##_r) return tl::unexpected(var##_r.error());     \
  auto var = *var##_r

}  // namespace

std::string cpu_name(uint32_t cputype) {
  switch (cputype) {
    case kCpuTypeX86_64: return "x86_64";
    case kCpuTypeArm64: return "arm64";
    case kCpuTypeX86: return "i386";
    case kCpuTypeArm: return "arm";
    default: return fmt::format("cputype {:#x}", cputype);
  }
}

std::optional<Arch> Slice::arch() const {
  switch (cputype_) {
    case kCpuTypeX86_64: return Arch::X86_64;
    case kCpuTypeArm64: return Arch::AArch64;
    case kCpuTypeX86: return Arch::I386;
    default: return std::nullopt;
  }
}

const Section* Slice::section(std::string_view segname, std::string_view sectname) const {
  for (const auto& s : sections_)
    if (s.segname == segname && s.sectname == sectname) return &s;
  return nullptr;
}

Bytes Slice::bytes_at_address(uint64_t addr, uint64_t size) const {
  for (const auto& s : sections_) {
    if (s.data.empty() || addr < s.addr || addr - s.addr >= s.data.size()) continue;
    const uint64_t off = addr - s.addr;
    if (size > s.data.size() - off) return {};
    return s.data.subspan(static_cast<size_t>(off), static_cast<size_t>(size));
  }
  return {};
}

namespace {

Result<void> read_relocations(Bytes bytes, Endian endian, uint32_t reloff,
                              uint32_t nreloc, Section& sect) {
  ByteReader file(bytes, endian, kContainer);
  if (nreloc == 0) return {};
  const uint64_t total = uint64_t{nreloc} * kRelocationSize;
  if (total > bytes.size()) return file.error_at(reloff, "reloff", "relocations past the end");
  UK_TRY(r, file.sub(reloff, static_cast<size_t>(total), "section.reloff"));
  for (uint32_t i = 0; i < nreloc; ++i) {
    UK_TRY(w0, r.u32("r_address"));
    UK_TRY(w1, r.u32("r_info"));
    Relocation rel;
    if (w0 & kRelocScattered) {
      rel.scattered = true;
      rel.address = w0 & kScatteredAddressMask;
      rel.scattered_value = w1;
    } else {
      rel.address = w0;
      rel.symbolnum = w1 & kRelocSymbolNumMask;
      rel.is_extern = (w1 & kRelocExternBit) != 0;
    }
    sect.relocations.push_back(rel);
  }
  return {};
}

}  // namespace

Result<Slice> Slice::parse(Bytes bytes) {
  Slice s;
  s.bytes_ = bytes;
  {
    ByteReader le(bytes, Endian::Little, kContainer);
    UK_TRY(magic, le.u32("magic"));
    if (magic == kMagic32 || magic == kMagic64) {
      s.endian_ = Endian::Little;
    } else if (magic == kCigam32 || magic == kCigam64) {
      s.endian_ = Endian::Big;
    } else {
      return le.error_at(0, "magic", fmt::format("not a Mach-O magic: {:#010x}", magic));
    }
    s.is_64_ = magic == kMagic64 || magic == kCigam64;
  }
  ByteReader r(bytes, s.endian_, kContainer);
  UK_CHECK(r.skip(4, "magic"));
  UK_TRY(cputype, r.u32("cputype"));
  UK_TRY(cpusubtype, r.u32("cpusubtype"));
  UK_TRY(filetype, r.u32("filetype"));
  UK_TRY(ncmds, r.u32("ncmds"));
  UK_TRY(sizeofcmds, r.u32("sizeofcmds"));
  s.cputype_ = cputype;
  s.cpusubtype_ = cpusubtype;
  s.filetype_ = filetype;
  const uint32_t header_size = s.is_64_ ? kHeaderSize64 : kHeaderSize32;
  UK_TRY(cmds, r.sub(header_size, sizeofcmds, "sizeofcmds"));

  uint32_t symoff = 0, nsyms = 0, stroff = 0, strsize = 0;
  bool have_symtab = false;
  bool have_text = false;
  std::vector<std::pair<uint32_t, uint32_t>> reloc_ranges;  // per section: reloff, nreloc
  for (uint32_t i = 0; i < ncmds; ++i) {
    const size_t start = cmds.pos();
    UK_TRY(cmd, cmds.u32("load_command.cmd"));
    UK_TRY(cmdsize, cmds.u32("load_command.cmdsize"));
    if (cmdsize < kLoadCommandHeaderSize || cmdsize > cmds.size() - start)
      return cmds.error_at(start + 4, "load_command.cmdsize",
                           fmt::format("load command {} size {} does not fit", i, cmdsize));
    UK_TRY(lc, cmds.sub(start, cmdsize, "load_command"));
    UK_CHECK(lc.skip(kLoadCommandHeaderSize, "load_command"));
    if (cmd == kLcSegment || cmd == kLcSegment64) {
      const bool seg64 = cmd == kLcSegment64;
      Segment seg;
      UK_TRY(segname, read_name(lc, "segname"));
      seg.name = segname;
      UK_TRY(vmaddr, read_word(lc, seg64, "vmaddr"));
      UK_TRY(vmsize, read_word(lc, seg64, "vmsize"));
      UK_TRY(fileoff, read_word(lc, seg64, "fileoff"));
      UK_TRY(filesize, read_word(lc, seg64, "filesize"));
      seg.vmaddr = vmaddr;
      seg.vmsize = vmsize;
      seg.fileoff = fileoff;
      seg.filesize = filesize;
      UK_CHECK(lc.skip(8, "maxprot/initprot"));
      UK_TRY(nsects, lc.u32("nsects"));
      UK_CHECK(lc.skip(4, "flags"));
      if (seg.name == "__TEXT" && !have_text) {
        s.image_base_ = seg.vmaddr;
        have_text = true;
      }
      for (uint32_t k = 0; k < nsects; ++k) {
        Section sect;
        UK_TRY(sectname, read_name(lc, "sectname"));
        UK_TRY(ssegname, read_name(lc, "segname"));
        sect.sectname = sectname;
        sect.segname = ssegname;
        UK_TRY(addr, read_word(lc, seg64, "addr"));
        UK_TRY(size, read_word(lc, seg64, "size"));
        UK_TRY(offset, lc.u32("offset"));
        UK_CHECK(lc.skip(4, "align"));
        UK_TRY(reloff, lc.u32("reloff"));
        UK_TRY(nreloc, lc.u32("nreloc"));
        UK_TRY(flags, lc.u32("flags"));
        UK_CHECK(lc.skip(seg64 ? 12 : 8, "reserved"));
        sect.addr = addr;
        sect.size = size;
        sect.offset = offset;
        sect.flags = flags;
        if ((flags & kSectionTypeMask) != kSectionTypeZeroFill && size != 0) {
          if (offset > bytes.size() || size > bytes.size() - offset)
            return r.error_at(start, "section.offset",
                              fmt::format("section {},{} ({:#x} bytes at {:#x}) is past the end",
                                          sect.segname, sect.sectname, size, offset));
          sect.data = bytes.subspan(offset, static_cast<size_t>(size));
        }
        reloc_ranges.emplace_back(reloff, nreloc);
        s.sections_.push_back(std::move(sect));
      }
      s.segments_.push_back(std::move(seg));
    } else if (cmd == kLcUuid) {
      UK_TRY(uuid, lc.bytes(16, "uuid"));
      std::array<uint8_t, 16> u{};
      std::memcpy(u.data(), uuid.data(), u.size());
      s.uuid_ = u;
    } else if (cmd == kLcSymtab) {
      UK_TRY(so, lc.u32("symoff"));
      UK_TRY(ns, lc.u32("nsyms"));
      UK_TRY(sto, lc.u32("stroff"));
      UK_TRY(sts, lc.u32("strsize"));
      symoff = so, nsyms = ns, stroff = sto, strsize = sts;
      have_symtab = true;
    }
    UK_CHECK(cmds.seek(start + cmdsize, "load_command.cmdsize"));
  }

  for (size_t k = 0; k < s.sections_.size(); ++k) {
    UK_CHECK(read_relocations(bytes, s.endian_, reloc_ranges[k].first,
                                 reloc_ranges[k].second, s.sections_[k]));
  }

  if (have_symtab && nsyms > 0) {
    const uint32_t entsize = s.is_64_ ? kNlistSize64 : kNlistSize32;
    if (nsyms > bytes.size() / entsize) return r.error_at(0, "nsyms", "symbol table too large");
    UK_TRY(syms, r.sub(symoff, size_t{nsyms} * entsize, "symoff"));
    UK_TRY(strs, r.sub(stroff, strsize, "stroff"));
    for (uint32_t i = 0; i < nsyms; ++i) {
      UK_TRY(strx, syms.u32("n_strx"));
      UK_TRY(type, syms.u8("n_type"));
      UK_TRY(sect, syms.u8("n_sect"));
      UK_CHECK(syms.skip(2, "n_desc"));
      UK_TRY(value, read_word(syms, s.is_64_, "n_value"));
      Symbol sym{{}, type, sect, value};
      if (strx < strs.size()) {
        const Bytes tail = strs.data().subspan(strx);
        size_t n = 0;
        while (n < tail.size() && tail[n] != 0) ++n;
        sym.name.assign(reinterpret_cast<const char*>(tail.data()), n);
      }
      s.symbols_.push_back(std::move(sym));
    }
  }
  return s;
}

bool MachOFile::is_macho(Bytes bytes) {
  if (bytes.size() < 4) return false;
  const uint32_t be = (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) |
                      (uint32_t{bytes[2]} << 8) | bytes[3];
  const uint32_t le = (uint32_t{bytes[3]} << 24) | (uint32_t{bytes[2]} << 16) |
                      (uint32_t{bytes[1]} << 8) | bytes[0];
  return be == kFatMagic || be == kFatMagic64 || le == kMagic32 || le == kMagic64 ||
         le == kCigam32 || le == kCigam64;
}

Result<MachOFile> MachOFile::parse(std::shared_ptr<const std::vector<uint8_t>> image) {
  MachOFile f;
  f.image_ = std::move(image);
  const Bytes bytes(*f.image_);
  ByteReader be(bytes, Endian::Big, kContainer);
  UK_TRY(magic, be.u32("magic"));
  if (magic != kFatMagic && magic != kFatMagic64) {
    UK_TRY(slice, Slice::parse(bytes));
    f.slices_.push_back(std::move(slice));
    return f;
  }
  f.fat_ = true;
  const bool fat64 = magic == kFatMagic64;
  UK_TRY(nfat, be.u32("nfat_arch"));
  if (nfat > bytes.size() / kFatArchSize32)
    return be.error_at(kOffFatNArch, "nfat_arch", fmt::format("{} architectures cannot fit", nfat));
  for (uint32_t i = 0; i < nfat; ++i) {
    UK_TRY(cputype, be.u32("fat_arch.cputype"));
    UK_CHECK(be.skip(4, "fat_arch.cpusubtype"));
    UK_TRY(offset, be.uint(fat64 ? 8 : 4, "fat_arch.offset"));
    UK_TRY(size, be.uint(fat64 ? 8 : 4, "fat_arch.size"));
    UK_CHECK(be.skip(4, "fat_arch.align"));
    if (fat64) {
      UK_CHECK(be.u32("fat_arch.reserved"));
    }
    if (offset > bytes.size() || size > bytes.size() - offset)
      return be.error_at(be.pos() - (fat64 ? kFatArchSize64 : kFatArchSize32), "fat_arch.offset",
                         fmt::format("slice {} ({}) lies past the end", i, cpu_name(cputype)));
    auto slice = Slice::parse(bytes.subspan(static_cast<size_t>(offset), static_cast<size_t>(size)));
    if (!slice) {
      Error e = slice.error();
      e.section = fmt::format("Mach-O[{}]", cpu_name(cputype));
      return tl::unexpected(e);
    }
    f.slices_.push_back(std::move(*slice));
  }
  return f;
}

Result<MachOFile> MachOFile::open(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) return tl::unexpected(bytes.error());
  return parse(std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)));
}

Result<const Slice*> MachOFile::select(std::string_view arch_name) const {
  if (arch_name.empty()) {
    if (slices_.size() == 1) return &slices_[0];
    std::string names;
    for (const auto& s : slices_) names += (names.empty() ? "" : ", ") + cpu_name(s.cputype());
    return fail(kContainer, 0, "fat_arch",
                fmt::format("universal file with {} architectures ({}): choose one", slices_.size(),
                            names));
  }
  for (const auto& s : slices_)
    if (cpu_name(s.cputype()) == arch_name) return &s;
  return fail(ErrorKind::NotFound, kContainer, 0, "cputype",
              fmt::format("no {} slice in this file", arch_name));
}

}  // namespace unwindkit::macho
