#include "loaded_module.h"

#include <algorithm>

#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/validate.h"

namespace unwindkit::gdb {

namespace {

constexpr uint32_t kSegmentExecutable = 1;  // PF_X

}  // namespace

void LoadedModule::add_cfi(std::unique_ptr<elf::ElfFile> file) {
  auto cfi = dwarf::CfiTables::open(*file);
  files_.push_back(std::move(file));
  if (cfi && !cfi->empty()) cfi_.push_back(std::move(*cfi));
}

bool LoadedModule::has_cfi_at(uint64_t pc) const {
  for (const dwarf::CfiTables& cfi : cfi_) {
    auto rule = cfi.lookup(pc - bias_);
    if (!rule || *rule) return true;
  }
  return false;
}

std::shared_ptr<LoadedModule> LoadedModule::load(const std::string& path, uint64_t bias,
                                                 const std::vector<std::string>& debug_files) {
  auto module = std::make_shared<LoadedModule>();
  module->path_ = path;
  module->bias_ = bias;
  auto opened = elf::ElfFile::open(path);
  if (!opened) {
    module->error_ = opened.error();
    return module;
  }
  auto file = std::make_unique<elf::ElfFile>(std::move(*opened));
  module->arch_ = file->arch();
  for (const elf::Segment& seg : file->segments()) {
    if (seg.type != elf::kSegmentLoad) continue;
    module->load_mappings_.push_back({seg.vaddr + bias, seg.vaddr + seg.memsz + bias, seg.offset});
    if ((seg.flags & kSegmentExecutable) != 0)
      module->ranges_.push_back({seg.vaddr + bias, seg.vaddr + seg.memsz + bias});
  }

  // The section when section headers survive; else the PT_GNU_SFRAME segment (sstrip).
  uint64_t link_address = 0;
  if (const elf::Section* s = file->section(sframe::kSectionName);
      s != nullptr && s->type != elf::kSectionNoBits) {
    module->sframe_bytes_ = s->data;
    link_address = s->addr;
  } else {
    for (const elf::Segment& seg : file->segments()) {
      if (seg.type != elf::kSegmentGnuSFrame) continue;
      module->sframe_bytes_ = file->bytes_at_address(seg.vaddr, seg.filesz);
      link_address = seg.vaddr;
    }
  }
  module->add_cfi(std::move(file));
  for (const std::string& debug_path : debug_files) {
    if (auto debug = elf::ElfFile::open(debug_path))
      module->add_cfi(std::make_unique<elf::ElfFile>(std::move(*debug)));
  }
  if (module->sframe_bytes_.empty()) return module;
  module->sframe_address_ = link_address + bias;
  auto section = sframe::Index::build(module->sframe_bytes_, module->sframe_address_);
  if (!section) {
    module->error_ = section.error();
    return module;
  }
  // A table that decodes but fails the strict checks (a truncated FRE sub-section, FDEs out
  // of order, a function outside the code) is left to GDB, as the LLDB plugin does: unwinding
  // from it would replace GDB's own frames with wrong ones. The first problem is the error
  // `unwindkit status` shows; `unwindkit sframe check` lists them all.
  std::vector<sframe::AddressRange> text;
  for (const AddressRange& r : module->ranges_) text.push_back({r.start, r.end});
  auto problems = sframe::validate(module->sframe_bytes_, module->sframe_address_, text);
  if (!problems.empty()) {
    module->error_ = problems.front();
    return module;
  }
  module->sframe_ = std::move(*section);
  return module;
}

bool LoadedModule::contains(uint64_t pc) const {
  return std::any_of(ranges_.begin(), ranges_.end(),
                     [pc](const AddressRange& r) { return pc >= r.start && pc < r.end; });
}

Result<std::optional<UnwindRule>> LoadedModule::lookup(uint64_t pc) const {
  if (!sframe_) return std::optional<UnwindRule>{};
  return sframe_->lookup(pc);
}

}  // namespace unwindkit::gdb
