// SFrame from DWARF CFI: the rows of every `.eh_frame` (or `.debug_frame`) FDE of an ELF file,
// expressed as an SFrame section model (section.h) ready for the writer (encode.h).
//
// What SFrame can say follows gas (binutils gas/gen-sframe.c): the CFA is SP or FP plus an
// offset; the return address (x86_64: at the header's fixed CFA-8; AArch64: in x30 or saved at
// CFA+offset) and the frame pointer (unchanged or saved at CFA+offset) are the only registers;
// an undefined return address is the outermost frame. Every other callee-saved register is
// SFrame's blind spot, as in gas. Version 3 adds flexible FDEs (CFA on any register or
// dereferenced, RA/FP at any register) and the signal-frame bit; a function whose rows not
// even that expresses is skipped, and the reason kept.
#pragma once

#include <cstdint>
#include <vector>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

struct SkippedFunction {
  uint64_t start = 0;
  uint64_t end = 0;
  Error reason;  // names the CFI section and the FDE or pc that could not be expressed
};

struct CfiConversion {
  Section section;  // FDEs sorted by start; func_start resolved, start fields not yet placed
  size_t functions = 0;  // FDEs seen in the CFI
  size_t flex = 0;       // of them, written as v3 flexible FDEs
  std::vector<SkippedFunction> skipped;
};

// The SFrame model of `file`'s CFI for `version` (1, 2 or 3). Errors only for a file we cannot
// read at all (no CFI, an architecture SFrame has no ABI for, an unreadable CFI section);
// functions that cannot be expressed are in `skipped`.
Result<CfiConversion> from_cfi(const elf::ElfFile& file, uint8_t version);

}  // namespace unwindkit::sframe
