// The modules (executable, shared libraries, vdso) of a process being unwound: where each is
// mapped, its load bias, and its unwind tables. Each module's ELF file, DWARF CFI and
// SFrame section are found and parsed on first use and cached, so a walk through three
// libraries parses three, not the hundred a process may map.
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

  // Runtime address = ELF virtual address + bias. From the PT_LOAD that holds the lowest
  // mapped file offset; without the ELF file, the lowest mapping's start minus its offset.
  uint64_t bias();
  // The address in the ELF file for a runtime address (what addr2line and objdump take).
  uint64_t elf_address(uint64_t pc) { return pc - bias(); }

  // Opened/parsed on first use; errors are cached too.
  Result<const elf::ElfFile*> elf();
  Result<const dwarf::CfiTables*> cfi();
  // nullptr: the module has no .sframe section (or PT_GNU_SFRAME segment). The Index reads
  // the section inside the module's ELF image, which the module keeps.
  Result<const sframe::Index*> sframe();

  // Rules at runtime address `pc` (func_start/func_end in runtime addresses too);
  // nullopt when the table has no entry for it or the module has no such table.
  Result<std::optional<UnwindRule>> cfi_rule(uint64_t pc);
  Result<std::optional<UnwindRule>> sframe_rule(uint64_t pc);

 private:
  std::string path_;
  std::string file_;
  std::vector<Mapping> mappings_;
  std::shared_ptr<const std::vector<uint8_t>> image_;
  uint64_t start_ = 0, end_ = 0;

  std::optional<uint64_t> bias_;
  std::optional<Result<std::unique_ptr<elf::ElfFile>>> elf_;
  std::optional<Result<std::unique_ptr<dwarf::CfiTables>>> cfi_;
  std::optional<Result<std::unique_ptr<sframe::Index>>> sframe_;
};

class ModuleMap {
 public:
  ModuleMap() = default;
  // Every ELF file the core says was mapped (NT_FILE, or the executable the core reader
  // placed for cores without it), plus the vdso the auxv points at, read from the core.
  static ModuleMap from_core(const CoreFile& core);

  Module& add(Module module);
  // The module whose mappings cover `pc`, or nullptr.
  Module* find(uint64_t pc);
  const std::vector<std::unique_ptr<Module>>& modules() const { return modules_; }
  // Problems met while building the map (an unreadable vdso image).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<std::string> warnings_;
};

}  // namespace unwindkit::unwind
