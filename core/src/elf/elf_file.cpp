#include "unwindkit/elf/elf_file.h"

#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "../huge_pages.h"
#include "relocations.h"

namespace unwindkit::elf {

struct ElfFile::Handle {
  Elf* elf = nullptr;
  ~Handle() {
    if (elf) elf_end(elf);
  }
};

// An object's relocated sections, by index, each made at its first contents() (nullopt:
// nothing relocates it). A map: one section's bytes stay put while others are added.
struct ElfFile::Relocated {
  std::mutex lock;
  std::map<uint32_t, std::optional<std::vector<uint8_t>>> sections;
};

// constants.h against <elf.h> (gelf.h includes it).
static_assert(kMachineX86_64 == EM_X86_64 && kMachineAArch64 == EM_AARCH64 &&
              kMachineS390 == EM_S390 && kMachine386 == EM_386);
static_assert(kTypeRel == ET_REL && kTypeExec == ET_EXEC && kTypeDyn == ET_DYN &&
              kTypeCore == ET_CORE);
static_assert(kSegmentLoad == PT_LOAD && kSegmentNote == PT_NOTE && kSegmentPhdr == PT_PHDR &&
              kSegmentGnuSFrame == 0x6474e554 /* PT_GNU_SFRAME: not in glibc 2.36's */);
static_assert(kSectionNoBits == SHT_NOBITS && kNoteGnuBuildId == NT_GNU_BUILD_ID &&
              kAtPhdr == AT_PHDR && kAtEntry == AT_ENTRY);
static_assert(kIdentClass == EI_CLASS && kClass64 == ELFCLASS64);
static_assert(kEhdrSize64 == sizeof(Elf64_Ehdr) && kOffType == offsetof(Elf64_Ehdr, e_type) &&
              kOffType == offsetof(Elf32_Ehdr, e_type) &&
              kOffMachine == offsetof(Elf64_Ehdr, e_machine) &&
              kOffMachine == offsetof(Elf32_Ehdr, e_machine) &&
              kOffPhoff64 == offsetof(Elf64_Ehdr, e_phoff) &&
              kOffShoff64 == offsetof(Elf64_Ehdr, e_shoff) &&
              kOffPhentsize64 == offsetof(Elf64_Ehdr, e_phentsize) &&
              kOffPhnum64 == offsetof(Elf64_Ehdr, e_phnum) &&
              kOffShentsize64 == offsetof(Elf64_Ehdr, e_shentsize) &&
              kOffShnum64 == offsetof(Elf64_Ehdr, e_shnum));
static_assert(kPhdrSize64 == sizeof(Elf64_Phdr) && kOffPType == offsetof(Elf64_Phdr, p_type) &&
              kOffPOffset64 == offsetof(Elf64_Phdr, p_offset) &&
              kOffPFilesz64 == offsetof(Elf64_Phdr, p_filesz));
static_assert(kShdrSize64 == sizeof(Elf64_Shdr) && kOffShAddr64 == offsetof(Elf64_Shdr, sh_addr) &&
              kOffShOffset64 == offsetof(Elf64_Shdr, sh_offset) &&
              kOffShSize64 == offsetof(Elf64_Shdr, sh_size));

namespace {

constexpr std::string_view kSection = "ELF";

tl::unexpected<Error> elf_fail(uint64_t offset, std::string_view field, std::string what) {
  return fail(kSection, offset, field, std::move(what));
}

std::string libelf_message() {
  const char* m = elf_errmsg(-1);
  return m ? m : "libelf error";
}

void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

// Notes inside one data block, read with libelf's byte-order-aware gelf_getnote.
void collect_notes(Elf_Data* data, uint64_t file_offset, std::vector<Note>& out) {
  if (!data || !data->d_buf) return;
  size_t off = 0;
  GElf_Nhdr nhdr;
  size_t name_off = 0, desc_off = 0;
  const auto* base = static_cast<const uint8_t*>(data->d_buf);
  while (off < data->d_size) {
    const size_t next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off);
    if (next == 0 || next <= off) break;  // malformed note: stop, keep what was read
    Note n;
    if (nhdr.n_namesz > 0) {
      size_t len = nhdr.n_namesz;
      while (len > 0 && base[name_off + len - 1] == 0) --len;
      n.name.assign(reinterpret_cast<const char*>(base + name_off), len);
    }
    n.type = nhdr.n_type;
    n.desc = Bytes(base + desc_off, nhdr.n_descsz);
    n.offset = file_offset + desc_off;
    out.push_back(std::move(n));
    off = next;
  }
}

// Memory for a file image of `size` bytes: an anonymous mapping, whose pages take no memory
// until written, in huge pages where the system gives them (huge_pages.h). Null where no
// mapping is made.
std::pair<std::shared_ptr<const void>, uint8_t*> image_memory(size_t size) {
  void* addr = size == 0 ? MAP_FAILED
                         : ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (addr == MAP_FAILED) return {nullptr, nullptr};
  advise_huge_pages(addr, size);
  std::shared_ptr<const void> owner(addr, [size](const void* p) {
    ::munmap(const_cast<void*>(p), size);
  });
  return {std::move(owner), static_cast<uint8_t*>(addr)};
}

}  // namespace

Result<ElfFile> ElfFile::open(const std::string& path, Contents contents) {
  if (contents != Contents::Whole) return open_part(path, contents);
  // A directory opens, and its "size" (tellg at its end) asked for an exabyte: std::bad_alloc.
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    return fail(ErrorKind::Io, path, 0, "file", std::strerror(EISDIR));
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return fail(ErrorKind::Io, path, 0, "file", std::strerror(errno));
  // One read of the whole file into a buffer left uninitialized: a byte-at-a-time copy, and
  // then zero-filling a large program before reading over it, each dominated dumping one.
  const std::streamoff size = in.tellg();
  if (size < 0 || !in.seekg(0)) return fail(ErrorKind::Io, path, 0, "file", "read error");
  auto [owner, buffer] = image_memory(static_cast<size_t>(size));
  if (buffer == nullptr) {
    std::shared_ptr<uint8_t[]> heap(new uint8_t[static_cast<size_t>(size)]);
    buffer = heap.get();
    owner = std::move(heap);
  }
  if (!in.read(reinterpret_cast<char*>(buffer), size))
    return fail(ErrorKind::Io, path, 0, "file", "read error");
  return parse_image(std::move(owner), Bytes(buffer, static_cast<size_t>(size)), path);
}

namespace {

// All of [offset, offset + size) of the file, or false (a file shortened meanwhile).
bool read_at(int fd, uint8_t* to, uint64_t offset, uint64_t size) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, to, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    to += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

struct Part {
  uint64_t offset = 0;
  uint64_t end = 0;
  uint32_t section = 0;  // 0: a header table or a note segment
};

// The parts of the file `contents` names, and the sections it leaves out, from libelf reading
// the descriptor itself: ELF_C_READ reads the headers it is asked for and nothing else. False
// for anything libelf rejects, or a part that is not inside the file.
bool plan_parts(int fd, uint64_t size, ElfFile::Contents contents, std::vector<Part>& wanted,
                std::vector<Part>& unread) {
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr) return false;
  struct Ender {
    Elf* elf;
    ~Ender() { elf_end(elf); }
  } ender{elf};
  GElf_Ehdr eh;
  size_t phnum = 0, shnum = 0, shstrndx = 0;
  if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &phnum) != 0 ||
      elf_getshdrnum(elf, &shnum) != 0)
    return false;
  auto add = [&](std::vector<Part>& to, uint64_t offset, uint64_t length, uint32_t section) {
    if (offset > size || length > size - offset) return false;
    if (length != 0) to.push_back({offset, offset + length, section});
    return true;
  };
  if (!add(wanted, 0, gelf_fsize(elf, ELF_T_EHDR, 1, EV_CURRENT), 0) ||
      !add(wanted, eh.e_phoff, uint64_t{phnum} * eh.e_phentsize, 0) ||
      !add(wanted, eh.e_shoff, uint64_t{shnum} * eh.e_shentsize, 0))
    return false;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph)) return false;
    if (ph.p_type == PT_NOTE && !add(wanted, ph.p_offset, ph.p_filesz, 0)) return false;
  }
  const bool names = elf_getshdrstrndx(elf, &shstrndx) == 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) return false;
    if (sh.sh_type == SHT_NOBITS) continue;
    const auto index = static_cast<uint32_t>(elf_ndxscn(scn));
    const bool read = (names && index == shstrndx) || sh.sh_type == SHT_NOTE ||
                      (contents == ElfFile::Contents::NoCode && !(sh.sh_flags & SHF_EXECINSTR));
    if (!add(read ? wanted : unread, sh.sh_offset, sh.sh_size, index)) return false;
  }
  return true;
}

}  // namespace

// The parts are read into an image of the file's size whose other pages are never touched (an
// anonymous mapping: they take no memory), and parsed as a whole image is. A file libelf
// rejects, or one with a part outside it, is read whole: that read's errors name the fault.
Result<ElfFile> ElfFile::open_part(const std::string& path, Contents contents) {
  init_libelf();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(ErrorKind::Io, path, 0, "file", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  std::vector<Part> wanted, unread;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      !plan_parts(fd, static_cast<uint64_t>(st.st_size), contents, wanted, unread))
    return open(path);
  const auto size = static_cast<size_t>(st.st_size);
  auto [image_owner, image] = image_memory(size);
  if (image == nullptr) return open(path);
  for (const Part& part : wanted)
    if (!read_at(fd, image + part.offset, part.offset, part.end - part.offset))
      return fail(ErrorKind::Io, path, part.offset, "file", "read error (shortened while read?)");
  auto file = parse_image(std::move(image_owner), Bytes(image, size), path);
  if (!file) return file;
  for (const Part& part : unread) {
    for (Section& s : file->sections_)
      if (s.index == part.section) s.data = {};
    file->unread_.emplace_back(part.offset, part.end);
  }
  return file;
}

Result<ElfFile> ElfFile::map(const std::string& path) {
  auto file = map_file(path);
  if (!file) return tl::unexpected(file.error());
  return parse(*file, path);
}

Result<ElfFile> ElfFile::parse(const FileImage& file, std::string name) {
  return parse_image(file.owner, file.bytes, std::move(name));
}

Result<ElfFile> ElfFile::parse(std::shared_ptr<const std::vector<uint8_t>> image,
                               std::string name) {
  const Bytes bytes(*image);
  return parse_image(std::move(image), bytes, std::move(name));
}

Result<ElfFile> ElfFile::parse_image(std::shared_ptr<const void> owner, Bytes image,
                                     std::string name) {
  init_libelf();
  ElfFile f;
  f.name_ = std::move(name);
  f.owner_ = std::move(owner);
  f.image_ = image;
  const Bytes bytes = f.image_;
  if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    return elf_fail(0, "e_ident", "not an ELF file (bad magic)");

  f.handle_ = std::make_shared<Handle>();
  f.relocated_ = std::make_shared<Relocated>();
  // libelf only reads the image in ELF_C_READ mode; the cast is for its C signature.
  f.handle_->elf =
      elf_memory(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())), bytes.size());
  Elf* elf = f.handle_->elf;
  if (!elf || elf_kind(elf) != ELF_K_ELF) return elf_fail(0, "e_ident", libelf_message());

  GElf_Ehdr eh;
  if (!gelf_getehdr(elf, &eh)) return elf_fail(0, "ELF header", libelf_message());
  f.is_64_ = eh.e_ident[EI_CLASS] == ELFCLASS64;
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB && eh.e_ident[EI_DATA] != ELFDATA2MSB)
    return elf_fail(EI_DATA, "e_ident[EI_DATA]", "unknown byte order");
  f.endian_ = eh.e_ident[EI_DATA] == ELFDATA2LSB ? Endian::Little : Endian::Big;
  f.machine_ = eh.e_machine;
  f.type_ = eh.e_type;
  f.entry_ = eh.e_entry;

  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return elf_fail(0, "e_phnum", libelf_message());
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph))
      return elf_fail(eh.e_phoff, fmt::format("program header {}", i), libelf_message());
    f.segments_.push_back(Segment{ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz,
                                  ph.p_memsz, ph.p_align});
    if (ph.p_type == PT_NOTE && ph.p_filesz > 0) {
      if (ph.p_offset > bytes.size() || ph.p_filesz > bytes.size() - ph.p_offset)
        return elf_fail(eh.e_phoff, fmt::format("program header {}", i),
                        "PT_NOTE lies outside the file");
      Elf_Data* d = elf_getdata_rawchunk(elf, static_cast<int64_t>(ph.p_offset), ph.p_filesz,
                                         ELF_T_NHDR);
      collect_notes(d, ph.p_offset, f.notes_);
    }
  }

  size_t shstrndx = 0;
  const bool have_names = elf_getshdrstrndx(elf, &shstrndx) == 0;
  const bool notes_from_segments = !f.notes_.empty();
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) return elf_fail(eh.e_shoff, "section header", libelf_message());
    Section s;
    s.index = static_cast<uint32_t>(elf_ndxscn(scn));
    if (have_names) {
      const char* n = elf_strptr(elf, shstrndx, sh.sh_name);
      if (n) s.name = n;
    }
    s.type = sh.sh_type;
    s.flags = sh.sh_flags;
    s.addr = sh.sh_addr;
    s.offset = sh.sh_offset;
    s.size = sh.sh_size;
    s.addralign = sh.sh_addralign;
    s.link = sh.sh_link;
    s.info = sh.sh_info;
    s.entsize = sh.sh_entsize;
    if (sh.sh_type != SHT_NOBITS && sh.sh_size > 0) {
      if (sh.sh_offset > bytes.size() || sh.sh_size > bytes.size() - sh.sh_offset)
        return elf_fail(eh.e_shoff, fmt::format("section header {} ({})", s.index, s.name),
                        fmt::format("contents [{:#x}, +{:#x}) lie outside the {:#x}-byte file",
                                    sh.sh_offset, sh.sh_size, bytes.size()));
      if (sh.sh_type == SHT_NOTE) {
        if (!notes_from_segments) collect_notes(elf_getdata(scn, nullptr), sh.sh_offset, f.notes_);
        s.data = Bytes(bytes.data() + sh.sh_offset, sh.sh_size);
      } else {
        // The file's own bytes, untranslated: format readers handle byte order themselves.
        s.data = Bytes(bytes.data() + sh.sh_offset, sh.sh_size);
      }
    }
    f.sections_.push_back(std::move(s));
  }
  return f;
}

std::optional<Arch> ElfFile::arch() const {
  switch (machine_) {
    case kMachineX86_64: return Arch::X86_64;
    case kMachineAArch64: return Arch::AArch64;
    case kMachineS390: return Arch::S390x;
    case kMachine386: return Arch::I386;
    default: return std::nullopt;
  }
}

const Section* ElfFile::section(std::string_view name) const {
  for (const auto& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

Result<Bytes> ElfFile::contents(const Section& section) const {
  if (type_ != kTypeRel) return section.data;
  std::lock_guard<std::mutex> hold(relocated_->lock);
  auto it = relocated_->sections.find(section.index);
  if (it == relocated_->sections.end()) {
    auto relocated = detail::apply_relocations(*this, section);
    if (!relocated) return tl::unexpected(relocated.error());
    it = relocated_->sections.emplace(section.index, std::move(*relocated)).first;
  }
  if (!it->second) return section.data;
  return Bytes(*it->second);
}

std::optional<std::vector<uint8_t>> ElfFile::build_id() const {
  for (const auto& n : notes_)
    if (n.name == "GNU" && n.type == NT_GNU_BUILD_ID)
      return std::vector<uint8_t>(n.desc.begin(), n.desc.end());
  return std::nullopt;
}

Result<std::vector<Symbol>> ElfFile::symbols() const {
  Elf* elf = handle_->elf;
  Elf_Scn* table = nullptr;
  for (uint32_t want : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn && !table; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) && sh.sh_type == want) table = scn;
    }
    if (table) break;
  }
  std::vector<Symbol> out;
  if (!table) return out;
  GElf_Shdr sh;
  gelf_getshdr(table, &sh);
  Elf_Data* data = elf_getdata(table, nullptr);
  if (!data) return elf_fail(sh.sh_offset, "symbol table", libelf_message());
  const size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
    const uint8_t type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) continue;
    const char* n = elf_strptr(elf, sh.sh_link, sym.st_name);
    if (!n || !*n) continue;
    out.push_back(Symbol{n, sym.st_value, sym.st_size, type,
                         static_cast<uint8_t>(GELF_ST_BIND(sym.st_info)), sym.st_shndx});
  }
  return out;
}

Bytes ElfFile::bytes_at_address(uint64_t addr, uint64_t size) const {
  for (const auto& seg : segments_) {
    if (seg.type != kSegmentLoad || addr < seg.vaddr) continue;
    const uint64_t rel = addr - seg.vaddr;
    if (rel > seg.filesz || size > seg.filesz - rel) continue;
    const uint64_t off = seg.offset + rel;
    if (off > image_.size() || size > image_.size() - off) return {};
    for (const auto& [from, to] : unread_)
      if (off < to && from < off + size) return {};  // bytes open() did not read
    return image_.subspan(off, size);
  }
  return {};
}

}  // namespace unwindkit::elf
