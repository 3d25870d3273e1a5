// The debug file synthesized for one ELF module: what a debugger needs to unwind and name a
// stripped module with no plugin, stated in the formats every debugger reads. It carries the
// module's build-id (so GDB and LLDB accept it as that module's symbol file, e.g. when a
// debuginfod server hands it out), `.debug_frame` made from every SFrame row (with the
// prologue analyzer's saves) of each function the module's own CFI does not cover, plus the
// entry point's outermost rule, `.symtab` names, and `.debug_line`/`.debug_info` from `.trace`.
// LLDB's file states the CFI as `.eh_frame` where the module has none of its own, so that LLDB
// names those functions itself, as on the module's `.eh_frame` twin.
// A pure function of the module's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/dwarf/cfi_writer.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::debuginfo {

// What a function known only from SFrame is called.
enum class FallbackNames : uint8_t {
  // `___lldb_unnamed_symbol_<hex file address>`, the name LLDB 20 and later give such a
  // function themselves (see SynthesizeOptions::lldb_loads_it).
  Lldb,
  // `___lldb_unnamed_symbol<N>`, LLDB 19's name for it, numbered as LLDB 19 numbers the
  // module's `.eh_frame` twin (lldb_numbered_names.h), stated in `.symtab` with the CFI in
  // `.debug_frame`: LLDB 19 takes neither names nor unwinding from a symbol file's
  // `.eh_frame`, whoever makes the module.
  LldbNumbered,
  // No symbol: GDB users expect `?? ()` there.
  None,
};

struct SynthesizeOptions {
  FallbackNames fallback_names = FallbackNames::Lldb;
  // false: the file hands unwinding back to the debugger — no `.debug_frame` and no names
  // from SFrame, `.trace` lines kept — and is written even when it adds nothing, since it
  // replaces a file the debugger already holds (the LLDB plugin's `disable`).
  bool unwind = true;
  // Only the function at the entry point (its outermost rule, or its SFrame rows where SFrame
  // covers it) and `.trace`'s lines, no other function analyzed: for a module too large to
  // synthesize while a person waits, whose other frames a plugin's own unwinder does
  // meanwhile (the GDB plugin's first session of such a module).
  bool entry_point_only = false;
  // false: every SFrame row as the section states it, read straight from its bytes, with no
  // prologue analysis: the callee-saved registers other than the frame pointer are shown
  // unavailable in callers (except in a PLT, which touches none) instead of where the code
  // saved them. A 1 M-function module's file in about a twentieth of the time: for a debugger
  // that waits for the file (LLDB as it loads the module) while the analyzed one is made for
  // the sessions after.
  bool analyze = true;
  // LLDB's names only: LLDB reads the file as it makes the module (its debuginfod client).
  // Then, where the module has no `.eh_frame`, the file's CFI is one, and LLDB makes the
  // names itself, lazily, from its FDEs (ObjectFileELF::ParseUnwindSymbols) as on the module's
  // `.eh_frame` twin: no `.symtab` entry (a 1 M-function module's 1 M strings were LLDB's
  // largest cost). The file also holds an empty DWARF unit (synthesize.cpp
  // `symbol_file_dwarf`) where the module has at least `dwarf_unit_from` functions to state.
  // false: a file added to a module LLDB already made (`target symbols
  // add`), whose symbol table LLDB does not make again from a new `.eh_frame`: `.debug_frame`
  // and the names in `.symtab`, as where the module has an `.eh_frame` of its own (which LLDB
  // would give up for ours).
  bool lldb_loads_it = true;
  // The empty DWARF unit spares LLDB a second pass over the module's symbols (about 2,800
  // instructions per function, measured with callgrind on a 20,000-function module) but costs
  // about 4,000 per frame LLDB unwinds in the module (its DWARF plug-in is asked about every
  // pc: +0.7 % on a 3,000-frame `bt`, +1 % on a 1,000-thread `bt all`). Below this many
  // functions the pass costs at most about a millisecond, less than a deep stack's lookups.
  size_t dwarf_unit_from = 1000;
  // The most rows the file states for the module's PCMASK functions (a PLT: its rows repeat
  // every rep_size bytes, and CFI states each repetition), all together. A PLT has a few per
  // entry (100,000 entries: about 300,000 rows). A section that passes every check may still
  // repeat a function's rows every byte of a large text: a 16 MB one is 16.5 M rows, which took
  // GDB 26 s and 4 GB as it loaded the module. Past the limit the analyzed file (and the entry
  // point's) fails and the quick file has no CFI, with an Error naming the FDE that passed it;
  // GDB's plugin then unwinds the module with its own unwinder, which repeats no rows.
  uint64_t max_repeated_rows = uint64_t{1} << 20;
};

struct DebugFile {
  // The ELF file's bytes; empty when the module has nothing to add (no usable SFrame and no
  // `.trace` to restate).
  std::vector<uint8_t> bytes;
  // Tables that were present but left out, each naming section, offset and field (an SFrame
  // section failing the strict checks, a `.trace` that does not decode).
  std::vector<Error> left_out;
};

// Fails when the module cannot be a symbol file's target (no build-id, not a 64-bit
// executable or shared object of an architecture we unwind), or when its analyzed file would
// repeat more rows than SynthesizeOptions::max_repeated_rows. After a large file (8 MiB or
// more), the memory its making used is given back to the system (malloc_trim): glibc would
// keep it in its arenas for the life of the debugger or server that asked.
Result<DebugFile> synthesize(const elf::ElfFile& module, const SynthesizeOptions& options = {});

// Every SFrame row as a CFI row, with the prologue analyzer's findings from the module's code
// (prologue/lower.h): the slots of saved callee-saved registers, the others unchanged where the
// code proves it and undefined where it does not. A PCMASK function (a PLT) repeats its rows
// every rep_size bytes; each repetition becomes rows of its own.
// Functions are analyzed on as many threads as the machine has. The section's functions
// [first, last), in its order, less those with no row and those `wanted` (asked on the calling
// thread, before any analysis, with each function's start) refuses: a function the module's
// own CFI describes costs no analysis.
std::vector<dwarf::CfiFunction> cfi_functions(
    const sframe::Section& section, const elf::ElfFile& module, size_t first, size_t last,
    const std::function<bool(uint64_t)>& wanted = nullptr);

// Whether some function the SFrame section `bytes` (at `address`, read as `format`) lists
// has no FDE in any of `cfi` (dwarf::CfiTables::describes): only then can a side file's CFI
// add to what the module has. From the function index alone, no row read and no strict check
// made, and each function asked in address order (a 1 M-function module that kept
// `.eh_frame`: synthesize() answers "nothing to add" in about 0.12 s, where decoding the
// section and asking libdw per function took 1.5-2.1 s); an index that cannot be read gives
// decode()'s Error.
Result<bool> sframe_beyond_cfi(Bytes bytes, uint64_t address, sframe::Format format,
                               std::span<const dwarf::CfiTables> cfi);

}  // namespace unwindkit::debuginfo
