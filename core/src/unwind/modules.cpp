#include "unwindkit/unwind/modules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace unwindkit::unwind {

namespace {

constexpr uint64_t kAtSysinfoEhdr = 33;  // auxv: address of the vdso's ELF header
constexpr uint64_t kMaxVdsoSize = 1 << 20;

template <class T>
Result<const T*> borrow(const Result<std::unique_ptr<T>>& r) {
  if (!r) return tl::unexpected(r.error());
  return r->get();
}

// The vdso is not a file: copy its image out of the core's memory. Its size is where its
// section headers end (the kernel maps them along with the code).
Result<std::shared_ptr<const std::vector<uint8_t>>> read_vdso(const CoreFile& core, uint64_t base) {
  std::vector<uint8_t> header(64);
  if (!core.memory().read(base, header))
    return fail("core", base, "vdso", fmt::format("no vdso ELF header at {:#x}", base));
  ByteReader h(header, core.endian(), "vdso");
  auto phoff = h.uint_at(32, 8, "e_phoff");
  auto shoff = h.uint_at(40, 8, "e_shoff");
  auto phent = h.uint_at(54, 2, "e_phentsize");
  auto phnum = h.uint_at(56, 2, "e_phnum");
  auto shent = h.uint_at(58, 2, "e_shentsize");
  auto shnum = h.uint_at(60, 2, "e_shnum");
  if (!phoff || !shoff || !phent || !phnum || !shent || !shnum)
    return fail("vdso", 0, "ELF header", "truncated");
  const uint64_t size = std::max(*shoff + *shent * *shnum, *phoff + *phent * *phnum);
  if (size < header.size() || size > kMaxVdsoSize)
    return fail("vdso", 40, "e_shoff", fmt::format("implausible image size {:#x}", size));
  auto image = std::make_shared<std::vector<uint8_t>>(size);
  if (!core.memory().read(base, *image))
    return fail("core", base, "vdso", fmt::format("vdso image [{:#x}, {:#x}) not in the core", base, base + size));
  return std::shared_ptr<const std::vector<uint8_t>>(std::move(image));
}

}  // namespace

Module::Module(std::string path, std::string file, std::vector<Mapping> mappings,
               std::shared_ptr<const std::vector<uint8_t>> image)
    : path_(std::move(path)), file_(std::move(file)), mappings_(std::move(mappings)),
      image_(std::move(image)) {
  std::sort(mappings_.begin(), mappings_.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  if (!mappings_.empty()) {
    start_ = mappings_.front().start;
    for (const auto& m : mappings_) end_ = std::max(end_, m.end);
  }
}

uint64_t Module::bias() {
  if (bias_) return *bias_;
  if (mappings_.empty()) return *(bias_ = 0);
  const Mapping* low = &mappings_.front();
  for (const auto& m : mappings_)
    if (m.file_offset < low->file_offset) low = &m;
  bias_ = low->start - low->file_offset;
  // The PT_LOAD whose bytes start the lowest mapping: file offset X shows at p_vaddr +
  // (X - p_offset) + bias. Page rounding keeps p_vaddr - p_offset the same on both sides.
  if (auto f = elf(); f) {
    const elf::Segment* best = nullptr;
    for (const auto& seg : (*f)->segments()) {
      if (seg.type != elf::kSegmentLoad) continue;
      if (low->file_offset >= seg.offset + std::max<uint64_t>(seg.filesz, 1)) continue;
      if (!best || seg.offset < best->offset) best = &seg;
    }
    if (best) bias_ = low->start - low->file_offset - (best->vaddr - best->offset);
  }
  return *bias_;
}

Result<const elf::ElfFile*> Module::elf() {
  if (!elf_) {
    auto opened = image_ ? elf::ElfFile::parse(image_, path_)
                  : file_.empty()
                      ? Result<elf::ElfFile>(fail(path_, 0, "file", "not found on this machine"))
                      : elf::ElfFile::open(file_);
    if (opened)
      elf_ = std::make_unique<elf::ElfFile>(std::move(*opened));
    else
      elf_ = tl::unexpected(opened.error());
  }
  return borrow(*elf_);
}

Result<const dwarf::CfiTables*> Module::cfi() {
  if (!cfi_) {
    auto f = elf();
    if (!f) {
      cfi_ = tl::unexpected(f.error());
    } else if (auto t = dwarf::CfiTables::open(**f); t) {
      cfi_ = std::make_unique<dwarf::CfiTables>(std::move(*t));
    } else {
      cfi_ = tl::unexpected(t.error());
    }
  }
  return borrow(*cfi_);
}

Result<const sframe::Index*> Module::sframe() {
  if (!sframe_) {
    sframe_ = std::unique_ptr<sframe::Index>();
    auto f = elf();
    if (!f) {
      sframe_ = tl::unexpected(f.error());
    } else {
      Bytes bytes;
      uint64_t address = 0;
      if (const auto* s = (*f)->section(".sframe"); s && s->type != elf::kSectionNoBits) {
        bytes = s->data;
        address = s->addr;
      } else {
        // Without section headers the segment still finds it.
        for (const auto& seg : (*f)->segments())
          if (seg.type == elf::kSegmentGnuSFrame) {
            bytes = (*f)->bytes_at_address(seg.vaddr, seg.filesz);
            address = seg.vaddr;
          }
      }
      if (!bytes.empty()) {
        if (auto d = sframe::Index::build(bytes, address); d)
          sframe_ = std::make_unique<sframe::Index>(std::move(*d));
        else
          sframe_ = tl::unexpected(d.error());
      }
    }
  }
  return borrow(*sframe_);
}

namespace {

std::optional<UnwindRule> relocate(std::optional<UnwindRule> rule, uint64_t bias) {
  if (rule) {
    rule->func_start += bias;
    rule->func_end += bias;
  }
  return rule;
}

}  // namespace

Result<std::optional<UnwindRule>> Module::cfi_rule(uint64_t pc) {
  auto t = cfi();
  if (!t) return tl::unexpected(t.error());
  const uint64_t b = bias();
  auto r = (*t)->lookup(pc - b);
  if (!r) return r;
  return relocate(std::move(*r), b);
}

Result<std::optional<UnwindRule>> Module::sframe_rule(uint64_t pc) {
  auto s = sframe();
  if (!s) return tl::unexpected(s.error());
  if (!*s) return std::optional<UnwindRule>();
  const uint64_t b = bias();
  auto r = (*s)->lookup(pc - b);
  if (!r) return r;
  return relocate(std::move(*r), b);
}

Module& ModuleMap::add(Module module) {
  modules_.push_back(std::make_unique<Module>(std::move(module)));
  return *modules_.back();
}

Module* ModuleMap::find(uint64_t pc) {
  for (auto& m : modules_) {
    if (!m->contains(pc)) continue;
    for (const auto& map : m->mappings())
      if (pc >= map.start && pc < map.end) return m.get();
  }
  return nullptr;
}

ModuleMap ModuleMap::from_core(const CoreFile& core) {
  ModuleMap map;
  // One module per recorded path, in the order the core lists them.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, std::vector<Mapping>>> by_path;
  for (const auto& f : core.mapped_files()) {
    auto [it, inserted] = by_path.try_emplace(f.path, f.resolved, std::vector<Mapping>{});
    if (inserted) order.push_back(f.path);
    it->second.second.push_back({f.start, f.end, f.file_offset});
  }
  for (const auto& path : order) {
    auto& [file, mappings] = by_path[path];
    map.add(Module(path, file, std::move(mappings)));
  }
  for (const auto& [type, value] : core.auxv()) {
    if (type != kAtSysinfoEhdr || value == 0) continue;
    auto image = read_vdso(core, value);
    if (!image) {
      map.warnings_.push_back("vdso: " + image.error().to_string());
      continue;
    }
    const uint64_t size = (*image)->size();
    map.add(Module("[vdso]", "", {{value, value + size, 0}}, std::move(*image)));
  }
  return map;
}

}  // namespace unwindkit::unwind
