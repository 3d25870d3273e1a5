// Lowering the prologue analyzer's findings into SFrame rules (lower.h).
#include "unwindkit/prologue/lower.h"

#include <algorithm>

namespace unwindkit::prologue {

void lower(const Region* region, UnwindRule& rule) {
  if (region == nullptr || rule.outermost()) return;
  const ArchInfo& arch = arch_info(rule.arch);
  for (const SavedReg& s : region->saved) {
    if (s.reg == arch.fp || s.reg == arch.ra || s.reg == arch.sp) continue;
    const bool listed = std::any_of(rule.saved.begin(), rule.saved.end(),
                                    [&](const SavedReg& t) { return t.reg == s.reg; });
    if (!listed) rule.saved.push_back(s);
  }
  rule.unlisted = region->others_unchanged ? Unlisted::Unchanged : Unlisted::Unavailable;
}

namespace {

bool is_plt(const elf::Section& section) { return section.name.starts_with(".plt"); }

}  // namespace

bool in_plt(const elf::ElfFile& file, uint64_t address) {
  return std::any_of(file.sections().begin(), file.sections().end(), [&](const elf::Section& s) {
    return address >= s.addr && address - s.addr < s.size && is_plt(s);
  });
}

std::vector<std::pair<uint64_t, uint64_t>> plt_ranges(const elf::ElfFile& file) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const elf::Section& s : file.sections())
    if (is_plt(s)) out.emplace_back(s.addr, s.addr + s.size);
  return out;
}

Analysis analyze_function(const elf::ElfFile& file, Arch arch, uint64_t start, uint64_t end,
                          std::span<const TableRow> rows, std::span<const Entry> entries) {
  if (end <= start) return {};
  if (in_plt(file, start)) {  // nothing to decode: the stubs only jump
    Analysis plt;
    plt.regions.push_back({start, end, {}, true});
    plt.fully_explained = true;
    return plt;
  }
  const Bytes code = file.bytes_at_address(start, end - start);
  if (code.size() != end - start) return {};
  return analyze(arch, code, start, rows, entries);
}

}  // namespace unwindkit::prologue
