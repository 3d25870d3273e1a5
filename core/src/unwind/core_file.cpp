#include "unwindkit/unwind/core_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 moved it here)

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core_file_memory.h"
#include "core_file_notes.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/file_bytes.h"

namespace unwindkit::unwind {

namespace {

constexpr std::string_view kSection = "core";
// Bounds for reading an ELF header page back out of the core: a real first page holds a
// few dozen program headers and notes of a few hundred bytes.
constexpr uint64_t kMaxPhnum = 512, kMaxNoteBytes = 64 * 1024;

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string s;
  for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
  return s;
}

bool is_file(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec);
}

// Where a recorded path is on this machine, in the order CoreOptions documents; "" if
// nowhere. `tried` collects the candidates for the warning.
std::string resolve(const std::string& recorded, const CoreOptions& o,
                    std::vector<std::string>& tried) {
  auto consider = [&](std::string p) {
    tried.push_back(p);
    return is_file(p) ? p : std::string();
  };
  for (const auto& [from, to] : o.path_map)
    if (!from.empty() && recorded.starts_with(from))
      if (auto p = consider(to + recorded.substr(from.size())); !p.empty()) return p;
  if (auto p = consider(o.sysroot.empty() ? recorded : o.sysroot + recorded); !p.empty())
    return p;
  const std::string base = std::filesystem::path(recorded).filename().string();
  if (!base.empty())
    for (const auto& dir : o.search_dirs)
      if (auto p = consider((std::filesystem::path(dir) / base).string()); !p.empty()) return p;
  return {};
}

// The build-id in the ELF header page the core holds for a file mapped at `start` from file
// offset 0, if the core kept that page (Linux does, for ELF mappings, by default).
std::optional<std::vector<uint8_t>> core_copy_build_id(const detail::CoreMemory& mem,
                                                       uint64_t start, Endian endian) {
  std::vector<uint8_t> eh(elf::kEhdrSize64);
  if (!mem.read_core(start, eh)) return std::nullopt;
  if (std::memcmp(eh.data(), "\x7f" "ELF", 4) != 0 || eh[elf::kIdentClass] != elf::kClass64)
    return std::nullopt;
  ByteReader h(eh, endian, kSection);
  auto phoff = h.uint_at(elf::kOffPhoff64, 8, "e_phoff");
  auto phentsize = h.uint_at(elf::kOffPhentsize64, 2, "e_phentsize");
  auto phnum = h.uint_at(elf::kOffPhnum64, 2, "e_phnum");
  if (!phoff || !phentsize || !phnum || *phentsize < elf::kPhdrSize64 || *phnum > kMaxPhnum ||
      *phoff > UINT64_MAX - start)
    return std::nullopt;
  std::vector<uint8_t> ph(static_cast<size_t>(*phentsize * *phnum));
  if (!mem.read_core(start + *phoff, ph)) return std::nullopt;
  ByteReader p(ph, endian, kSection);
  for (uint64_t i = 0; i < *phnum; ++i) {
    const size_t at = static_cast<size_t>(i * *phentsize);
    auto type = p.uint_at(at + elf::kOffPType, 4, "p_type");
    auto off = p.uint_at(at + elf::kOffPOffset64, 8, "p_offset");
    auto size = p.uint_at(at + elf::kOffPFilesz64, 8, "p_filesz");
    if (!type || !off || !size || *type != elf::kSegmentNote || *size > kMaxNoteBytes ||
        *off > UINT64_MAX - start)
      continue;
    std::vector<uint8_t> notes(static_cast<size_t>(*size));
    if (!mem.read_core(start + *off, notes)) continue;
    ByteReader n(notes, endian, kSection);
    while (n.remaining() >= 12) {
      auto namesz = n.u32("n_namesz");
      auto descsz = n.u32("n_descsz");
      auto ntype = n.u32("n_type");
      if (!namesz || !descsz || !ntype) break;
      auto name = n.bytes(*namesz, "name");
      if (!name || !n.skip((4 - *namesz % 4) % 4, "name padding")) break;
      auto desc = n.bytes(*descsz, "desc");
      if (!desc) break;
      if (*ntype == elf::kNoteGnuBuildId && *namesz == 4 && std::memcmp(name->data(), "GNU", 4) == 0)
        return std::vector<uint8_t>(desc->begin(), desc->end());
      if (!n.skip((4 - *descsz % 4) % 4, "desc padding")) break;
    }
  }
  return std::nullopt;
}

}  // namespace

struct CoreFile::Impl {
  elf::ElfFile elf;  // owns the image the notes and segments borrow from
  Arch arch = Arch::X86_64;
  std::vector<CoreThread> threads;
  std::vector<MappedFile> mapped;
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  std::vector<std::string> warnings;
  detail::CoreMemory memory;
  bool has_nt_file = false;
  std::optional<Error> thread_error;  // why the first unreadable NT_PRSTATUS was skipped

  std::optional<uint64_t> aux(uint64_t type) const {
    for (const auto& [t, v] : auxv)
      if (t == type) return v;
    return std::nullopt;
  }
  void read_notes();
  void read_segments();
  void place_executable(const CoreOptions& o);
  void resolve_mapped_files(const CoreOptions& o);
};

void CoreFile::Impl::read_notes() {
  for (const auto& note : elf.notes()) {
    if (note.name != "CORE") continue;
    if (note.type == detail::kNotePrStatus) {
      if (auto t = detail::decode_prstatus(note.desc, note.offset, arch, elf.endian())) {
        threads.push_back(std::move(*t));
      } else {
        warnings.push_back("thread skipped: " + t.error().to_string());
        if (!thread_error) thread_error = t.error();
      }
    } else if (note.type == detail::kNoteFile && !has_nt_file) {
      if (auto m = detail::decode_nt_file(note.desc, note.offset, elf.endian())) {
        mapped = std::move(*m);
        has_nt_file = true;
      } else {
        warnings.push_back("mapped files unknown: " + m.error().to_string());
      }
    } else if (note.type == detail::kNoteAuxv && auxv.empty()) {
      if (auto a = detail::decode_auxv(note.desc, note.offset, elf.endian()))
        auxv = std::move(*a);
      else
        warnings.push_back("auxv unreadable: " + a.error().to_string());
    }
  }
}

void CoreFile::Impl::read_segments() {
  const Bytes image = elf.image();
  for (const auto& seg : elf.segments()) {
    if (seg.type != elf::kSegmentLoad || seg.filesz == 0) continue;
    const uint64_t have =
        seg.offset >= image.size() ? 0 : std::min<uint64_t>(seg.filesz, image.size() - seg.offset);
    if (have < seg.filesz)
      warnings.push_back(fmt::format(
          "core truncated: PT_LOAD at {:#x} has {:#x} of its {:#x} bytes in the file", seg.vaddr,
          have, seg.filesz));
    if (have > 0)
      memory.add_core_segment(seg.vaddr,
                              image.subspan(static_cast<size_t>(seg.offset), static_cast<size_t>(have)));
  }
}

// Cores without NT_FILE (qemu's) do not say where the program was mapped: place the given
// executable's PT_LOAD segments, at the load bias AT_PHDR implies for a PIE.
void CoreFile::Impl::place_executable(const CoreOptions& o) {
  auto exe = elf::ElfFile::map(o.executable);
  if (!exe) {
    warnings.push_back(fmt::format("executable {}: {}", o.executable, exe.error().to_string()));
    return;
  }
  uint64_t bias = 0;
  if (exe->type() == elf::kTypeDyn) {
    std::optional<uint64_t> phdr_vaddr;
    for (const auto& seg : exe->segments())
      if (seg.type == elf::kSegmentPhdr) phdr_vaddr = seg.vaddr;
    ByteReader h(exe->image(), exe->endian(), "ELF");
    auto phoff = h.uint_at(elf::kOffPhoff64, 8, "e_phoff");
    for (const auto& seg : exe->segments())
      if (!phdr_vaddr && seg.type == elf::kSegmentLoad && seg.offset == 0 && phoff)
        phdr_vaddr = seg.vaddr + *phoff;
    const auto at_phdr = aux(elf::kAtPhdr);
    if (!at_phdr || !phdr_vaddr) {
      warnings.push_back(fmt::format(
          "executable {} is position-independent and the core has no AT_PHDR: not placed",
          o.executable));
      return;
    }
    bias = *at_phdr - *phdr_vaddr;
  }
  for (const auto& seg : exe->segments()) {
    if (seg.type != elf::kSegmentLoad || seg.filesz == 0) continue;
    mapped.push_back(MappedFile{seg.vaddr + bias, seg.vaddr + bias + seg.filesz, seg.offset,
                                o.executable, o.executable, {}});
  }
}

void CoreFile::Impl::resolve_mapped_files(const CoreOptions& o) {
  // The executable is the file mapped where the auxv says the program headers or the entry are.
  std::string exe_path;
  if (!o.executable.empty())
    for (uint64_t type : {elf::kAtPhdr, elf::kAtEntry})
      if (auto addr = aux(type); addr && exe_path.empty())
        for (const auto& m : mapped)
          if (*addr >= m.start && *addr < m.end) exe_path = m.path;

  std::map<std::string, std::string> resolved;  // recorded path → found path
  std::map<std::string, std::optional<FileImage>> images;
  for (auto& m : mapped) {
    if (!m.resolved.empty()) {
      resolved.emplace(m.path, m.resolved);
    } else if (!resolved.contains(m.path)) {
      std::vector<std::string> tried;
      std::string found = !exe_path.empty() && m.path == exe_path && is_file(o.executable)
                              ? o.executable
                              : resolve(m.path, o, tried);
      if (found.empty())
        warnings.push_back(fmt::format("mapped file {} not found (tried {})", m.path,
                                       fmt::join(tried, ", ")));
      resolved.emplace(m.path, found);
    }
    m.resolved = resolved[m.path];
    if (m.resolved.empty()) continue;
    auto [it, inserted] = images.try_emplace(m.resolved);
    if (inserted) {
      if (auto file = map_file(m.resolved))
        it->second = std::move(*file);
      else
        warnings.push_back(fmt::format("mapped file {}: {}", m.resolved, file.error().message));
    }
    if (it->second) memory.add_file_mapping(m.start, m.end, m.file_offset, *it->second);
  }
  memory.finish();

  // A file found on disk must be the one the process had: compare build-ids where the core
  // kept the file's first page.
  std::map<std::string, std::vector<uint8_t>> core_build_ids;  // by recorded path
  std::set<std::string> checked;
  for (const auto& m : mapped) {
    if (m.resolved.empty() || m.file_offset != 0 || !checked.insert(m.resolved).second) continue;
    const auto in_core = core_copy_build_id(memory, m.start, elf.endian());
    if (!in_core) continue;
    core_build_ids[m.path] = *in_core;
    std::optional<std::vector<uint8_t>> on_disk;
    if (const auto& image = images[m.resolved])
      if (auto f = elf::ElfFile::parse(*image, m.resolved)) on_disk = f->build_id();
    if (on_disk != in_core)
      warnings.push_back(fmt::format("build-id mismatch: the core's {} has {}, {} has {}", m.path,
                                     hex(*in_core), m.resolved,
                                     on_disk ? hex(*on_disk) : std::string("none")));
  }
  for (auto& m : mapped)
    if (auto it = core_build_ids.find(m.path); it != core_build_ids.end()) m.core_build_id = it->second;
}

CoreFile::CoreFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CoreFile::CoreFile(CoreFile&&) noexcept = default;
CoreFile& CoreFile::operator=(CoreFile&&) noexcept = default;
CoreFile::~CoreFile() = default;

Result<CoreFile> CoreFile::open(const std::string& path, const CoreOptions& options) {
  auto elf = elf::ElfFile::map(path);
  if (!elf) return tl::unexpected(elf.error());
  return from_elf(std::move(*elf), options);
}

Result<CoreFile> CoreFile::parse(std::shared_ptr<const std::vector<uint8_t>> image,
                                 std::string name, const CoreOptions& options) {
  auto elf = elf::ElfFile::parse(std::move(image), std::move(name));
  if (!elf) return tl::unexpected(elf.error());
  return from_elf(std::move(*elf), options);
}

Result<CoreFile> CoreFile::from_elf(elf::ElfFile file, const CoreOptions& options) {
  if (file.type() != elf::kTypeCore)
    return fail(kSection, elf::kOffType, "e_type",
                fmt::format("{} is not a core file", file.name()));
  const auto arch = file.arch();
  if (!file.is_64() || !arch || *arch == Arch::I386)
    return fail(ErrorKind::Unsupported, kSection, elf::kOffMachine, "e_machine",
                fmt::format("machine {} ({}-bit): only x86_64, AArch64 and s390x cores are read",
                            file.machine(), file.is_64() ? 64 : 32));

  auto impl = std::make_unique<Impl>(Impl{std::move(file), *arch, {}, {}, {}, {}, {}, false, {}});
  impl->read_notes();
  if (impl->threads.empty()) {
    if (impl->thread_error) return tl::unexpected(*impl->thread_error);
    return fail(kSection, 0, "NT_PRSTATUS", "the core has no thread (no NT_PRSTATUS note)");
  }
  impl->read_segments();
  if (!impl->has_nt_file && !options.executable.empty() && options.read_mapped_files)
    impl->place_executable(options);
  if (options.read_mapped_files) impl->resolve_mapped_files(options);
  else impl->memory.finish();
  return CoreFile(std::move(impl));
}

Arch CoreFile::arch() const { return impl_->arch; }
Endian CoreFile::endian() const { return impl_->elf.endian(); }
const std::vector<CoreThread>& CoreFile::threads() const { return impl_->threads; }
const std::vector<MappedFile>& CoreFile::mapped_files() const { return impl_->mapped; }
const std::vector<std::pair<uint64_t, uint64_t>>& CoreFile::auxv() const { return impl_->auxv; }
const MemoryReader& CoreFile::memory() const { return impl_->memory; }
const std::vector<std::string>& CoreFile::warnings() const { return impl_->warnings; }

}  // namespace unwindkit::unwind
