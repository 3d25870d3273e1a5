// The modules (executable, shared libraries, vdso, Mach-O images) of a process being unwound:
// where each is mapped, its load bias, and its unwind tables. This is the one module model:
// the CLI, the GDB plugin and the LLDB plugin all describe their modules with it. Each
// module's file, DWARF CFI, SFrame section and compact unwind tables are found and parsed on
// first use and cached, so a walk through three libraries parses three, not the hundred a
// process may map.
//
// The strict-check policy lives here: an SFrame section that fails the strict checks
// (sframe/validate.h) gives no rules at all; the frames it covers are left to other sources
// and to the debugger, since rules from a damaged table would replace true frames with wrong
// ones.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/macho/macho_file.h"
#include "unwindkit/compact_unwind/tables.h"
#include "unwindkit/error.h"
#include "unwindkit/prologue/analyzer.h"
#include "unwindkit/prologue/fragments.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/unwind/core_file.h"

namespace unwindkit::unwind {

// One mapping of a module's file: [start, end) in the process shows the file from
// `file_offset` on.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;
};

class Module {
 public:
  // `path`: the name the process knew ("" for an anonymous image); `file`: where its bytes
  // are on this machine ("" when missing). An in-memory `image` (the vdso, read from the
  // core) replaces `file`.
  Module(std::string path, std::string file, std::vector<Mapping> mappings,
         std::shared_ptr<const std::vector<uint8_t>> image = nullptr);

  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  uint64_t start() const { return start_; }
  uint64_t end() const { return end_; }
  bool contains(uint64_t pc) const { return pc >= start_ && pc < end_; }
  const std::vector<Mapping>& mappings() const { return mappings_; }
  // Where the module turned out to be mapped, for a module made before that was known (one
  // whose tables were prepared ahead: prepare_sframe()).
  void set_mappings(std::vector<Mapping> mappings);

  // Runtime address = ELF virtual address + bias. From the PT_LOAD that holds the lowest
  // mapped file offset; without the ELF file, the lowest mapping's start minus its offset.
  // A front end that knows the bias from its debugger states it with set_bias().
  uint64_t bias();
  void set_bias(uint64_t bias) { bias_ = bias; }
  // Separate debug files of this module (GDB's debug objfiles): their CFI counts as the
  // module's own.
  void add_debug_file(std::string path) { debug_files_.push_back(std::move(path)); }
  // The address in the ELF file for a runtime address (what addr2line and objdump take).
  uint64_t elf_address(uint64_t pc) { return pc - bias(); }

  // Opened/parsed on first use; errors are cached too.
  Result<const elf::ElfFile*> elf();
  std::optional<Arch> arch();
  // The module's own CFI first, then its debug files' (files without CFI left out).
  Result<const std::vector<dwarf::CfiTables>*> cfi();
  bool has_cfi();

  // Where the SFrame section is: its bytes and link-time address; nullopt when the module has
  // no .sframe or .ctf_frame section (or PT_GNU_SFRAME segment).
  struct SectionBytes {
    Bytes bytes;
    uint64_t address = 0;
    sframe::Format format = sframe::Format::SFrame;
  };
  std::optional<SectionBytes> sframe_section();
  // nullptr: no SFrame. An error: it cannot be decoded, or it fails the strict checks (the
  // first problem; sframe_problems() lists them all). The Index reads the section inside the
  // module's image, which the module keeps.
  Result<const sframe::Index*> sframe();
  const std::vector<Error>& sframe_problems();
  // Starts what sframe() does on a thread of its own and returns at once; sframe() then waits
  // for what is left. For a large section whose first frames come soon after, and few (the
  // GDB plugin starts it when GDB loads such a file, while GDB goes on reading the core):
  // the strict checks, then an index of the functions alone (Index::build_functions), whose
  // lookups read rows from the bytes. Does nothing when no thread can be started.
  void prepare_sframe();
  // Executable PT_LOAD segments, as runtime [start, end): where SFrame functions may lie.
  std::vector<std::pair<uint64_t, uint64_t>> code_ranges();

  // The module as a Mach-O image (one slice: the only one, or an error for a universal file).
  Result<const macho::Slice*> macho_slice();
  Result<const compact_unwind::SliceTables*> compact_unwind();

  // Rules at runtime address `pc` (func_start/func_end in runtime addresses too);
  // nullopt when the table has no entry for it or the module has no such table.
  Result<std::optional<UnwindRule>> cfi_rule(uint64_t pc);
  // SFrame's rule with the prologue analyzer's findings (prologue/lower.h): the slots the
  // code saved callee-saved registers in, and whether the others are proven unchanged.
  Result<std::optional<UnwindRule>> sframe_rule(uint64_t pc);
  // Compact unwind, with its DWARF handover: a DWARF-mode entry's rule comes from the image's
  // __eh_frame. Encoding 0 (no information) is nullopt, for other sources to try.
  Result<std::optional<UnwindRule>> compact_unwind_rule(uint64_t pc);
  // The program's entry-point function, outermost (entry_point.h).
  Result<std::optional<UnwindRule>> entry_point_rule(uint64_t pc);

 private:
  std::string path_;
  std::string file_;
  std::vector<Mapping> mappings_;
  std::shared_ptr<const std::vector<uint8_t>> image_;
  uint64_t start_ = 0, end_ = 0;

  std::vector<std::string> debug_files_;
  std::optional<uint64_t> bias_;
  std::optional<Result<std::unique_ptr<elf::ElfFile>>> elf_;
  // Debug files stay at one address: their CFI tables point into them.
  std::vector<std::unique_ptr<elf::ElfFile>> debug_elves_;
  // The module's own CFI, then its debug files' once debug_cfi_opened_.
  std::optional<Result<std::vector<dwarf::CfiTables>>> cfi_;
  bool debug_cfi_opened_ = false;
  Result<const std::vector<dwarf::CfiTables>*> cfi_tables(bool with_debug_files);
  std::optional<Result<std::unique_ptr<sframe::Index>>> sframe_;
  std::vector<Error> sframe_problems_;
  struct CheckedIndex {
    std::vector<Error> problems;
    Result<sframe::Index> index;
  };
  // prepare_sframe()'s work under way. Declared after elf_, so destroyed before it: the
  // threads read the section inside elf_'s image.
  std::future<CheckedIndex> sframe_prepared_;
  std::optional<Result<std::unique_ptr<macho::MachOFile>>> macho_;
  std::optional<Result<std::unique_ptr<compact_unwind::SliceTables>>> compact_unwind_;
  std::optional<std::optional<UnwindRule>> entry_point_;  // link-time addresses
  // The prologue analysis of each SFrame function asked about, by link-time start: made once
  // (a cold fragment's from the jumps into it, prologue/fragments.h).
  std::unordered_map<uint64_t, prologue::Analysis> analyses_;
  // The module's direct jumps, made at the first function that may be a fragment.
  std::optional<prologue::JumpIndex> jumps_;
  void add_code_saves(const sframe::Index& index, uint64_t at, UnwindRule& rule);
  // The analysis of the SFrame function [start, end) holding link-time `at`; with `fragments`,
  // a fragment's from its entries. nullptr without the module's file.
  const prologue::Analysis* analysis(const sframe::Index& index, uint64_t at, uint64_t start,
                                     uint64_t end, Arch arch, bool fragments);
};

class ModuleMap {
 public:
  ModuleMap() = default;
  // Every ELF file the core says was mapped (NT_FILE, or the executable the core reader
  // placed for cores without it), plus the vdso the auxv points at, read from the core.
  static ModuleMap from_core(const CoreFile& core);

  Module& add(Module module);
  Module& add(std::shared_ptr<Module> module);
  void clear() { modules_.clear(); }
  // The module whose mappings cover `pc`, or nullptr.
  Module* find(uint64_t pc) const;
  std::shared_ptr<Module> find_shared(uint64_t pc) const;
  const std::vector<std::shared_ptr<Module>>& modules() const { return modules_; }
  // Problems met while building the map (an unreadable vdso image).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
  std::vector<std::string> warnings_;
};

}  // namespace unwindkit::unwind
