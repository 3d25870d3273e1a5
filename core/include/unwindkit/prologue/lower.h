// The prologue analyzer's findings (analyzer.h) lowered into an SFrame rule, the one place
// they join the rule model: the walker (Module::sframe_rule), the GDB unwinder through it,
// and the synthesized CFI of side files (debuginfo::cfi_functions) all take them from here.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/prologue/analyzer.h"
#include "unwindkit/rules.h"

namespace unwindkit::prologue {

// Adds `region`'s slots to `rule.saved` (SFrame's own FP and RA rules stay: the table states
// them) and sets `rule.unlisted` from what the code proved. No region (the analysis does not
// reach this pc): the rule is left as it is, its unproven registers unavailable.
void lower(const Region* region, UnwindRule& rule);

// PLT stubs (`.plt`, `.plt.sec`, `.plt.got`) only jump: they touch no callee-saved register,
// which the ABI's lazy-binding contract guarantees. For an SFrame PCMASK function there.
bool in_plt(const elf::ElfFile& file, uint64_t address);
// The [start, end) of each of the file's PLT sections: in_plt for a caller that asks of many
// addresses.
std::vector<std::pair<uint64_t, uint64_t>> plt_ranges(const elf::ElfFile& file);

// The analysis of the function [start, end) of `file` against its rows; the code bytes come
// from the file, as the tables do. A PLT function (in_plt) is one region, every register
// unchanged. An empty Analysis when the file does not hold the code. `entries`: analyze()'s.
Analysis analyze_function(const elf::ElfFile& file, Arch arch, uint64_t start, uint64_t end,
                          std::span<const TableRow> rows, std::span<const Entry> entries = {});

}  // namespace unwindkit::prologue
