// The outermost rule at e_entry (see entry_point.h).
#include "unwindkit/unwind/entry_point.h"

#include <elf.h>

#include <algorithm>

#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/stepper.h"

namespace unwindkit::unwind {

std::optional<UnwindRule> entry_point_rule(const elf::ElfFile& file) {
  const uint64_t entry = file.entry();
  const std::optional<Arch> arch = file.arch();
  if (entry == 0 || (arch != Arch::X86_64 && arch != Arch::AArch64)) return std::nullopt;
  // Only a program starts at its entry point: a shared library's e_entry is merely the start
  // of its .text (or a function of its own, as libc's). A program is ET_EXEC, or ET_DYN
  // with an interpreter (PIE).
  const bool program =
      file.type() == elf::kTypeExec ||
      std::any_of(file.segments().begin(), file.segments().end(),
                  [](const elf::Segment& s) { return s.type == PT_INTERP; });
  if (!program) return std::nullopt;
  uint64_t end = 0;
  for (const elf::Section& s : file.sections())
    if ((s.flags & SHF_ALLOC) && (s.flags & SHF_EXECINSTR) && entry >= s.addr &&
        entry - s.addr < s.size)
      end = s.addr + s.size;
  if (end == 0) return std::nullopt;
  // The file's own CFI covers the entry point (a copy that kept .eh_frame): it states the
  // outermost frame itself, and a rule of ours would only hide the functions after it.
  if (auto cfi = dwarf::CfiTables::open(file); cfi && !cfi->empty()) {
    auto covered = cfi->lookup(entry);
    if (!covered || *covered) return std::nullopt;
  }

  if (const auto found = sframe::find_section(file)) {
    if (auto around = sframe::functions_around(found->section->data, found->section->addr,
                                               found->format, entry)) {
      if (around->holding) return std::nullopt;
      if (around->next_start) end = std::min(end, *around->next_start);
    }
  }
  if (auto symbols = file.symbols()) {
    for (const elf::Symbol& sym : *symbols) {
      bool code = sym.type == STT_FUNC || sym.type == STT_GNU_IFUNC;
      if (code && sym.size != 0 && entry >= sym.value && entry - sym.value < sym.size)
        end = std::min(end, sym.value + sym.size);
    }
  }

  UnwindRule rule;
  rule.arch = *arch;
  rule.source = Source::EntryPoint;
  rule.cfa = {CfaRule::Kind::RegOffset, RegisterSet(*arch).sp_reg(),
              *arch == Arch::X86_64 ? int64_t{arch_word_size(*arch)} : 0};
  rule.ra = RegRule::undefined();
  rule.func_start = entry;
  rule.func_end = end;
  return rule;
}

}  // namespace unwindkit::unwind
