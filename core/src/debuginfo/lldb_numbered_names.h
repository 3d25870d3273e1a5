// LLDB 19's names for functions it knows only from CFI: `___lldb_unnamed_symbol<N>`, where
// N is the symbol's id in LLDB's symbol table of the module. Measured on Debian 13's lldb-19
// (`image dump symtab`): the ids of `.dynsym`'s entries are their indices; the PLT's
// trampolines (one per DT_JMPREL relocation) come next; then each `.eh_frame` FDE, in address
// order, that starts where no symbol does gets the next id (ObjectFileELF::ParseSymtab, then
// ParseUnwindSymbols). LLDB 20 and later name such a function by its address instead
// (`___lldb_unnamed_symbol_<hex>`). A side file for LLDB 19 states these names in `.symtab`,
// numbered as LLDB 19 numbers the module's `.eh_frame` twin.
#pragma once

#include <cstdint>
#include <optional>

#include "unwindkit/elf/elf_file.h"

namespace unwindkit::debuginfo {

// LLDB 19's ids for the functions of one module it names from CFI, asked in address order.
class LldbNumbering {
 public:
  explicit LldbNumbering(const elf::ElfFile& module);
  // The id of the function at `start`, which the module's symbols do not name; nullopt where
  // LLDB 19 has a PLT trampoline symbol (one per DT_JMPREL relocation, at each PLT entry past
  // a `.plt` section's first): it names that function itself, and numbers nothing there.
  std::optional<uint64_t> next(uint64_t start);

 private:
  const elf::ElfFile& module_;
  uint64_t next_id_ = 0;
  bool trampolines_ = false;
};

}  // namespace unwindkit::debuginfo
