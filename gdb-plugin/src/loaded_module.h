// One ELF file as GDB has it loaded: its SFrame table (indexed at the run-time address, so
// lookups take the PCs GDB shows; the Index reads rows from the file's own bytes, so the table
// costs one array of function starts), the address ranges its executable segments occupy, and
// where GDB has DWARF CFI for it (.eh_frame / .debug_frame here or in a separate debug file):
// asked per PC, because one file often has both (a static program: libc's CFI, our SFrame).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/index.h"

namespace unwindkit::gdb {

struct AddressRange {
  uint64_t start = 0;  // [start, end), run-time addresses
  uint64_t end = 0;
};

class LoadedModule {
 public:
  // Never fails: a file that cannot be read, or a table that cannot be decoded or fails the
  // strict checks (sframe/validate.h), gives a module with no table and `error()` saying why
  // (with the byte offset for table problems).
  // `bias` = run-time address - link-time address. `debug_files` are GDB's separate debug
  // objfiles for this file; they count only for the CFI question.
  static std::shared_ptr<LoadedModule> load(const std::string& path, uint64_t bias,
                                            const std::vector<std::string>& debug_files);

  const std::string& path() const { return path_; }
  uint64_t bias() const { return bias_; }
  std::optional<Arch> arch() const { return arch_; }
  bool has_cfi() const { return !cfi_.empty(); }
  // Whether an FDE in this file's CFI covers `pc` (a run-time address). An FDE whose rule
  // we cannot lower still counts: GDB has CFI there.
  bool has_cfi_at(uint64_t pc) const;
  const std::vector<AddressRange>& ranges() const { return ranges_; }
  // Every PT_LOAD segment as mapped: (run-time start, run-time end, file offset).
  struct LoadMapping {
    uint64_t start, end, file_offset;
  };
  const std::vector<LoadMapping>& load_mappings() const { return load_mappings_; }
  bool contains(uint64_t pc) const;

  // The table, or null when the file has none, it could not be decoded or it failed the
  // strict checks.
  const sframe::Index* sframe() const { return sframe_ ? &*sframe_ : nullptr; }
  bool has_sframe_bytes() const { return !sframe_bytes_.empty(); }
  Bytes sframe_bytes() const { return sframe_bytes_; }
  uint64_t sframe_address() const { return sframe_address_; }  // run-time address
  uint64_t sframe_link_address() const { return sframe_address_ - bias_; }
  const std::optional<Error>& error() const { return error_; }

  // The rule for `pc` (nullopt: no table, or no function covers it).
  Result<std::optional<UnwindRule>> lookup(uint64_t pc) const;

 private:
  void add_cfi(std::unique_ptr<elf::ElfFile> file);

  std::string path_;
  uint64_t bias_ = 0;
  std::optional<Arch> arch_;
  std::vector<AddressRange> ranges_;
  std::vector<LoadMapping> load_mappings_;
  // Files stay at one address: sframe_bytes_ and the CFI tables point into them.
  std::vector<std::unique_ptr<elf::ElfFile>> files_;
  std::vector<dwarf::CfiTables> cfi_;  // non-empty tables only
  Bytes sframe_bytes_;
  uint64_t sframe_address_ = 0;
  std::optional<sframe::Index> sframe_;
  std::optional<Error> error_;
};

}  // namespace unwindkit::gdb
