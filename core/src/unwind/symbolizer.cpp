#include "unwindkit/unwind/symbolizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 moved it here)

#include <algorithm>
#include <filesystem>

namespace unwindkit::unwind {

namespace {

constexpr uint8_t kSttFunc = 2, kSttGnuIfunc = 10;
constexpr uint8_t kStbLocal = 0, kStbGlobal = 1, kStbWeak = 2;

int bind_rank(uint8_t bind) {
  return bind == kStbGlobal ? 0 : bind == kStbWeak ? 1 : bind == kStbLocal ? 2 : 3;
}

std::vector<elf::Symbol> functions_of(const elf::ElfFile& file) {
  std::vector<elf::Symbol> out;
  auto syms = file.symbols();
  if (!syms) return out;
  for (auto& s : *syms)
    if ((s.type == kSttFunc || s.type == kSttGnuIfunc) && s.shndx != 0 && !s.name.empty()) {
      // glibc's .symtab spells versioned definitions "name@@GLIBC_2.34": show the name.
      if (const auto at = s.name.find('@'); at != std::string::npos && at > 0) s.name.resize(at);
      out.push_back(std::move(s));
    }
  std::sort(out.begin(), out.end(), [](const elf::Symbol& a, const elf::Symbol& b) {
    return a.value != b.value ? a.value < b.value : bind_rank(a.bind) < bind_rank(b.bind);
  });
  return out;
}

bool has_symtab(const elf::ElfFile& file) {
  const auto* s = file.section(".symtab");
  return s && s->size > 0;
}

}  // namespace

const elf::Symbol* covering_function(const std::vector<elf::Symbol>& functions, uint64_t address) {
  // Walk back from the last symbol at or before `address`. Aliases share a start; they are
  // sorted best binding first, so walking back the last covering alias seen is the best.
  // A function nested in a bigger one (rare) is found within a few steps; the bound keeps a
  // miss cheap.
  constexpr size_t kMaxScan = 64;
  auto it = std::upper_bound(functions.begin(), functions.end(), address,
                             [](uint64_t a, const elf::Symbol& s) { return a < s.value; });
  const elf::Symbol* found = nullptr;
  std::optional<uint64_t> nearest;
  for (size_t n = 0; it != functions.begin() && n < kMaxScan; ++n) {
    --it;
    if (found && it->value != found->value) break;
    if (!nearest) nearest = it->value;
    const bool covers = it->size > 0 ? address - it->value < it->size : it->value == *nearest;
    if (covers) found = &*it;
  }
  return found;
}

const Symbolizer::Table& Symbolizer::table(Module& module) {
  auto [it, inserted] = tables_.try_emplace(&module);
  if (!inserted) return it->second;
  auto f = module.elf();
  if (!f) return it->second;
  if (!has_symtab(**f)) {
    if (auto id = (*f)->build_id(); id && id->size() > 1) {
      const std::string hex = fmt::format("{:02x}", fmt::join(*id, ""));
      for (const auto& dir : options_.debug_dirs) {
        const auto path = std::filesystem::path(dir) / ".build-id" / hex.substr(0, 2) /
                          (hex.substr(2) + ".debug");
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) continue;
        auto debug = elf::ElfFile::open(path.string());
        if (debug && debug->build_id() == id) {
          it->second.functions = functions_of(*debug);
          if (!it->second.functions.empty()) return it->second;
        }
      }
    }
  }
  it->second.functions = functions_of(**f);
  return it->second;
}

std::optional<SymbolHit> Symbolizer::lookup(Module& module, CodeAddress address) {
  const Table& t = table(module);
  const elf::Symbol* s = covering_function(t.functions, module.elf_address(address.lookup_address()));
  if (!s) return std::nullopt;
  return SymbolHit{s->name, module.elf_address(address.pc()) - s->value};
}

}  // namespace unwindkit::unwind
