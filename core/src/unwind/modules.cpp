#include "unwindkit/unwind/modules.h"

#include "unwindkit/unwind/entry_point.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <map>

#include "unwindkit/compact_unwind/lookup.h"
#include "unwindkit/elf/constants.h"
#include "unwindkit/prologue/lower.h"
#include "unwindkit/compact_unwind/report.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/sframe/validate.h"

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
  std::vector<uint8_t> header(elf::kEhdrSize64);
  if (!core.memory().read(base, header))
    return fail("core", base, "vdso", fmt::format("no vdso ELF header at {:#x}", base));
  ByteReader h(header, core.endian(), "vdso");
  auto phoff = h.uint_at(elf::kOffPhoff64, 8, "e_phoff");
  auto shoff = h.uint_at(elf::kOffShoff64, 8, "e_shoff");
  auto phent = h.uint_at(elf::kOffPhentsize64, 2, "e_phentsize");
  auto phnum = h.uint_at(elf::kOffPhnum64, 2, "e_phnum");
  auto shent = h.uint_at(elf::kOffShentsize64, 2, "e_shentsize");
  auto shnum = h.uint_at(elf::kOffShnum64, 2, "e_shnum");
  if (!phoff || !shoff || !phent || !phnum || !shent || !shnum)
    return fail("vdso", 0, "ELF header", "truncated");
  const uint64_t size = std::max(*shoff + *shent * *shnum, *phoff + *phent * *phnum);
  if (size < header.size() || size > kMaxVdsoSize)
    return fail("vdso", elf::kOffShoff64, "e_shoff", fmt::format("implausible image size {:#x}", size));
  auto image = std::make_shared<std::vector<uint8_t>>(size);
  if (!core.memory().read(base, *image))
    return fail("core", base, "vdso", fmt::format("vdso image [{:#x}, {:#x}) not in the core", base, base + size));
  return std::shared_ptr<const std::vector<uint8_t>>(std::move(image));
}

}  // namespace

Module::Module(std::string path, std::string file, std::vector<Mapping> mappings,
               std::shared_ptr<const std::vector<uint8_t>> image)
    : path_(std::move(path)), file_(std::move(file)), image_(std::move(image)) {
  set_mappings(std::move(mappings));
}

void Module::set_mappings(std::vector<Mapping> mappings) {
  mappings_ = std::move(mappings);
  std::sort(mappings_.begin(), mappings_.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  start_ = end_ = 0;
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
                      : elf::ElfFile::map(file_);
    if (opened)
      elf_ = std::make_unique<elf::ElfFile>(std::move(*opened));
    else
      elf_ = tl::unexpected(opened.error());
  }
  return borrow(*elf_);
}

std::optional<Arch> Module::arch() {
  if (auto f = elf(); f) return (*f)->arch();
  if (auto s = macho_slice(); s) return (*s)->arch();
  return std::nullopt;
}

Result<const std::vector<dwarf::CfiTables>*> Module::cfi() { return cfi_tables(true); }

Result<const std::vector<dwarf::CfiTables>*> Module::cfi_tables(bool with_debug_files) {
  if (!cfi_) {
    auto f = elf();
    if (!f) {
      cfi_ = tl::unexpected(f.error());
    } else if (auto own = dwarf::CfiTables::open(**f); !own) {
      cfi_ = tl::unexpected(own.error());
    } else {
      cfi_ = std::vector<dwarf::CfiTables>();
      if (!own->empty()) (*cfi_)->push_back(std::move(*own));
    }
  }
  if (!*cfi_) return tl::unexpected(cfi_->error());
  if (with_debug_files && !debug_cfi_opened_) {
    debug_cfi_opened_ = true;
    for (const std::string& path : debug_files_) {
      auto debug = elf::ElfFile::open(path);
      if (!debug) continue;  // a debug file we cannot read adds nothing
      debug_elves_.push_back(std::make_unique<elf::ElfFile>(std::move(*debug)));
      if (auto t = dwarf::CfiTables::open(*debug_elves_.back()); t && !t->empty())
        (*cfi_)->push_back(std::move(*t));
    }
  }
  return &**cfi_;
}

bool Module::has_cfi() {
  auto t = cfi();
  return t && !(*t)->empty();
}

std::optional<Module::SectionBytes> Module::sframe_section() {
  auto f = elf();
  if (!f) return std::nullopt;
  if (const auto found = sframe::find_section(**f)) {
    // An object's relocations that cannot be applied leave no table this module can read.
    auto bytes = sframe::section_bytes(**f, *found);
    if (!bytes) return std::nullopt;
    return SectionBytes{*bytes, found->section->addr, found->format};
  }
  // Without section headers the segment still finds it.
  for (const auto& seg : (*f)->segments())
    if (seg.type == elf::kSegmentGnuSFrame)
      return SectionBytes{(*f)->bytes_at_address(seg.vaddr, seg.filesz), seg.vaddr};
  return std::nullopt;
}

std::vector<std::pair<uint64_t, uint64_t>> Module::code_ranges() {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  auto f = elf();
  if (!f) return out;
  const uint64_t b = bias();
  for (const auto& seg : (*f)->segments())
    if (seg.type == elf::kSegmentLoad && (seg.flags & elf::kSegmentFlagExecute) != 0)
      out.emplace_back(seg.vaddr + b, seg.vaddr + seg.memsz + b);
  return out;
}

namespace {

// The strict checks on a thread of their own while the index is built: two independent
// passes over the same bytes (a large module's first frame waits for both). One thread does
// both when no other can be started.
template <class CheckedIndex>
CheckedIndex check_and_index(const Module::SectionBytes& section,
                             const std::vector<sframe::AddressRange>& text) {
  auto check = [&] { return sframe::validate(section.bytes, section.address, text, section.format); };
  std::future<std::vector<Error>> problems;
  try {
    problems = std::async(std::launch::async, check);
  } catch (const std::system_error&) {
    problems = std::async(std::launch::deferred, check);
  }
  auto index = sframe::Index::build(section.bytes, section.address, section.format);
  return CheckedIndex{problems.get(), std::move(index)};
}

}  // namespace

void Module::prepare_sframe() {
  if (sframe_ || sframe_prepared_.valid() || !elf()) return;
  const auto section = sframe_section();
  if (!section || section->bytes.empty()) return;
  std::vector<sframe::AddressRange> text;
  for (const auto& [start, end] : code_ranges()) text.push_back({start - bias(), end - bias()});
  try {
    // One thread beside the debugger's: the checks, then the functions alone (a prepared
    // module serves the few frames of a session that waits for nothing else).
    sframe_prepared_ = std::async(std::launch::async, [section = *section, text = std::move(text)] {
      auto problems = sframe::validate(section.bytes, section.address, text, section.format);
      return CheckedIndex{std::move(problems),
                          sframe::Index::build_functions(section.bytes, section.address,
                                                         section.format)};
    });
  } catch (const std::system_error&) {
    // No thread to be had: sframe() does the work when asked.
  }
}

Result<const sframe::Index*> Module::sframe() {
  if (!sframe_) {
    sframe_ = std::unique_ptr<sframe::Index>();
    std::optional<CheckedIndex> checked;
    if (sframe_prepared_.valid()) {
      checked = sframe_prepared_.get();
    } else if (auto f = elf(); !f) {
      sframe_ = tl::unexpected(f.error());
    } else if (auto section = sframe_section(); section && !section->bytes.empty()) {
      std::vector<sframe::AddressRange> text;
      for (const auto& [start, end] : code_ranges()) text.push_back({start - bias(), end - bias()});
      checked = check_and_index<CheckedIndex>(*section, text);
    }
    if (checked) {
      sframe_problems_ = std::move(checked->problems);
      if (!checked->index)
        sframe_ = tl::unexpected(checked->index.error());
      else if (!sframe_problems_.empty())
        sframe_ = tl::unexpected(sframe_problems_.front());
      else
        sframe_ = std::make_unique<sframe::Index>(std::move(*checked->index));
    }
  }
  return borrow(*sframe_);
}

const std::vector<Error>& Module::sframe_problems() {
  (void)sframe();
  return sframe_problems_;
}

Result<const macho::Slice*> Module::macho_slice() {
  if (!macho_) {
    auto opened = image_ ? macho::MachOFile::parse(image_)
                  : file_.empty()
                      ? Result<macho::MachOFile>(fail(path_, 0, "file", "not found on this machine"))
                      : macho::MachOFile::open(file_);
    if (opened)
      macho_ = std::make_unique<macho::MachOFile>(std::move(*opened));
    else
      macho_ = tl::unexpected(opened.error());
  }
  auto file = borrow(*macho_);
  if (!file) return tl::unexpected(file.error());
  return (*file)->select("");
}

Result<const compact_unwind::SliceTables*> Module::compact_unwind() {
  if (!compact_unwind_) {
    auto slice = macho_slice();
    if (!slice) {
      compact_unwind_ = tl::unexpected(slice.error());
    } else if (auto t = compact_unwind::decode_slice(**slice); t) {
      compact_unwind_ = std::make_unique<compact_unwind::SliceTables>(std::move(*t));
    } else {
      compact_unwind_ = tl::unexpected(t.error());
    }
  }
  return borrow(*compact_unwind_);
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
  const uint64_t b = bias();
  // The module's own CFI first; its debug files' are opened only for a pc it does not cover
  // (libc's debug file restates libc's CFI in a compressed .debug_frame: 40 ms to open).
  size_t searched = 0;
  for (const bool with_debug_files : {false, true}) {
    auto t = cfi_tables(with_debug_files);
    if (!t) return tl::unexpected(t.error());
    for (; searched < (*t)->size(); ++searched) {
      auto r = (**t)[searched].lookup(pc - b);
      if (!r) return r;
      if (*r) return relocate(std::move(*r), b);
    }
  }
  return std::optional<UnwindRule>();
}

Result<std::optional<UnwindRule>> Module::sframe_rule(uint64_t pc) {
  auto s = sframe();
  if (!s) return tl::unexpected(s.error());
  if (!*s) return std::optional<UnwindRule>();
  const uint64_t b = bias();
  auto r = (*s)->lookup(pc - b);
  if (!r || !*r) return r;
  add_code_saves(**s, pc - b, **r);
  return relocate(std::move(*r), b);
}

void Module::add_code_saves(const sframe::Index& index, uint64_t at, UnwindRule& rule) {
  if (rule.outermost()) return;
  if (const prologue::Analysis* a =
          analysis(index, at, rule.func_start, rule.func_end, rule.arch, true))
    prologue::lower(a->at(at), rule);
}

const prologue::Analysis* Module::analysis(const sframe::Index& index, uint64_t at,
                                           uint64_t start, uint64_t end, Arch arch,
                                           bool fragments) {
  if (auto it = analyses_.find(start); it != analyses_.end()) return &it->second;
  auto file = elf();
  if (!file) return nullptr;
  auto rows = index.function_rows(at);
  if (!rows) return &analyses_.emplace(start, prologue::Analysis{}).first->second;
  prologue::Analysis a = prologue::analyze_function(**file, arch, start, end, *rows);
  if (fragments) {
    auto jumps = [&]() -> const prologue::JumpIndex& {
      if (!jumps_) {
        std::vector<uint64_t> starts = index.function_starts();
        std::sort(starts.begin(), starts.end());
        jumps_ = prologue::JumpIndex::build(**file, arch, starts);
      }
      return *jumps_;
    };
    // The function a jump comes from, entered by a call (a fragment's own entries are not
    // followed further).
    auto from = [&](uint64_t pc) -> const prologue::Analysis* {
      auto r = index.lookup(pc);
      if (!r || !*r || (*r)->outermost()) return nullptr;
      return analysis(index, pc, (*r)->func_start, (*r)->func_end, arch, false);
    };
    a = prologue::analyze_entered(std::move(a), **file, start, end, *rows, jumps, from);
  }
  // (Element references stay valid as the map grows: the jumping function's, held above.)
  return &analyses_.emplace(start, std::move(a)).first->second;
}

Result<std::optional<UnwindRule>> Module::entry_point_rule(uint64_t pc) {
  if (!entry_point_) {
    auto file = elf();
    if (!file) return tl::unexpected(file.error());
    entry_point_ = unwind::entry_point_rule(**file);
  }
  const uint64_t at = pc - bias();
  if (!*entry_point_ || at < (*entry_point_)->func_start || at >= (*entry_point_)->func_end)
    return std::optional<UnwindRule>();
  return relocate(*entry_point_, bias());
}

Result<std::optional<UnwindRule>> Module::compact_unwind_rule(uint64_t pc) {
  auto t = compact_unwind();
  if (!t) return tl::unexpected(t.error());
  const macho::Slice& slice = **macho_slice();
  const uint64_t b = bias();
  auto found = compact_unwind::find_entry(**t, pc - b);
  if (!found) return tl::unexpected(found.error());
  if (!*found) return std::optional<UnwindRule>();
  const compact_unwind::Entry& e = **found;
  const Bytes code = slice.bytes_at_address(e.function_start, e.function_end - e.function_start);
  auto lowered = compact_unwind::lower((*t)->arch, e, code);
  if (!lowered) return tl::unexpected(lowered.error());
  switch (lowered->kind) {
    case compact_unwind::Lowered::Kind::NoInfo: return std::optional<UnwindRule>();
    case compact_unwind::Lowered::Kind::Rule: return relocate(std::move(lowered->rule), b);
    case compact_unwind::Lowered::Kind::UseDwarf: {
      auto rule = compact_unwind::dwarf_rule(slice, (*t)->arch, pc - b);
      if (!rule) return rule;
      return relocate(std::move(*rule), b);
    }
  }
  return std::optional<UnwindRule>();
}

Module& ModuleMap::add(Module module) { return add(std::make_shared<Module>(std::move(module))); }

Module& ModuleMap::add(std::shared_ptr<Module> module) {
  modules_.push_back(std::move(module));
  return *modules_.back();
}

std::shared_ptr<Module> ModuleMap::find_shared(uint64_t pc) const {
  Module* found = find(pc);
  for (const auto& m : modules_)
    if (m.get() == found) return m;
  return nullptr;
}

Module* ModuleMap::find(uint64_t pc) const {
  for (const auto& m : modules_) {
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
