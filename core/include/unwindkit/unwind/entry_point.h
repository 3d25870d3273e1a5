// The outermost rule at a program's entry point. The ELF entry point (`_start`) is where the
// process begins: nothing called it, so its return address is undefined and a walk ends there,
// as its own CFI says. Assemblers emit no SFrame for it and strip removes its `.eh_frame`, so
// without this rule a walker (or a debugger reading synthesized CFI) runs past the last frame.
#pragma once

#include <optional>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/rules.h"

namespace unwindkit::unwind {

// In link-time addresses: RA undefined, the CFA as the kernel leaves the stack at entry
// (x86_64 sp+8, counting a return-address slot as CFI does for any function; AArch64 sp+0),
// over [e_entry, end). `end` is the nearest of: the next SFrame function start, the end of a
// `.symtab`/`.dynsym` function symbol covering e_entry (in a static program libc follows
// `_start` with no SFrame, and a rule stretching over it would end every walk there), the
// end of the executable section holding e_entry. nullopt when the file has no entry point in
// an executable section, its architecture is not one we unwind, or SFrame or the file's own
// CFI already covers it, or the file is not a program (a shared library).
std::optional<UnwindRule> entry_point_rule(const elf::ElfFile& file);

}  // namespace unwindkit::unwind
