// ELF core files: threads and their registers (NT_PRSTATUS, x86_64, AArch64 and s390x layouts),
// memory (PT_LOAD; read-only file-backed pages that the core omits are read from the mapped
// file on disk, as debuggers do), mapped files (NT_FILE), auxv (NT_AUXV).
// (Contract shared by the walker, the CLI and the tests; implementation in core/src/unwind/.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/stepper.h"

namespace unwindkit::elf {
class ElfFile;
}

namespace unwindkit::unwind {

struct CoreThread {
  int64_t tid = 0;
  int signal = 0;  // pr_cursig
  RegisterSet regs;
};

struct MappedFile {
  uint64_t start = 0;  // [start, end) in the process
  uint64_t end = 0;
  uint64_t file_offset = 0;  // byte offset in the file of `start`
  std::string path;          // as recorded in the core
  std::string resolved;      // where it was found on this machine ("" if not found)
  // The build-id in the core's copy of the file's ELF header page (of the mapping at file
  // offset 0, for every mapping of the file); empty when the core kept no such page.
  std::vector<uint8_t> core_build_id;
};

struct CoreOptions {
  std::string executable;  // the program's file; needed when the core has no NT_FILE (qemu)
  std::string sysroot;     // prefix for every mapped path (a moved root file system)
  // Path remapping for moved binaries: a recorded path starting with `first` is looked up
  // with that prefix replaced by `second`. Searched in order, before `sysroot`.
  std::vector<std::pair<std::string, std::string>> path_map;
  // Folders searched by file name when a recorded path does not exist.
  std::vector<std::string> search_dirs;
  // Whether to open mapped files on disk at all (off for fuzzing, where the recorded paths
  // are attacker-chosen and the disk is not part of the input).
  bool read_mapped_files = true;
};

class CoreFile {
 public:
  // The core mapped (elf::ElfFile::map): a backtrace reads a few of its pages.
  static Result<CoreFile> open(const std::string& path, const CoreOptions& options = {});
  // Parses a core image already in memory; `name` is used in errors and warnings.
  static Result<CoreFile> parse(std::shared_ptr<const std::vector<uint8_t>> image,
                                std::string name, const CoreOptions& options = {});

  Arch arch() const;
  Endian endian() const;
  const std::vector<CoreThread>& threads() const;
  const std::vector<MappedFile>& mapped_files() const;
  // (type, value) pairs from NT_AUXV.
  const std::vector<std::pair<uint64_t, uint64_t>>& auxv() const;
  // Reads process memory: the core's PT_LOAD bytes first, then the mapped files on disk.
  const MemoryReader& memory() const;
  // Problems that do not stop a walk: missing files, build-id mismatches, truncated segments.
  const std::vector<std::string>& warnings() const;

  CoreFile(CoreFile&&) noexcept;
  CoreFile& operator=(CoreFile&&) noexcept;
  ~CoreFile();

 private:
  struct Impl;
  explicit CoreFile(std::unique_ptr<Impl> impl);
  static Result<CoreFile> from_elf(elf::ElfFile file, const CoreOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace unwindkit::unwind
