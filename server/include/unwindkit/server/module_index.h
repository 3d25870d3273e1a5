// The modules a debuginfod server may serve, by build-id: the ELF executables and shared
// objects found under the paths it was given (folders scanned recursively), and the files
// that cores given to it mapped (NT_FILE). Nothing outside this index is ever served.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/server/unique_fd.h"

namespace unwindkit::server {

struct IndexedModule {
  std::string path;
  std::string build_id;  // lowercase hex
  // SHA-256 of the file, lowercase hex; empty until with_content_hash() when the index
  // was told to hash later (IndexOptions::hash_later).
  std::string content_hash;
  uint64_t size = 0;  // size and times when indexed: a file changed since is not served
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;  // moved by every write, and settable by no one
  uint64_t device = 0, inode = 0;
};

struct IndexOptions {
  uint64_t max_file_size = uint64_t{512} << 20;  // larger files are skipped (bounds each request)
  // Where each file's build-id and content hash are remembered between processes, by the
  // file's identity (device, inode, size, modification and change times): a file indexed
  // again unchanged is neither read nor hashed (a 76 MB module took 0.2 s). nullopt: every
  // file is read and hashed. The folder is held to 1 MiB of memos, least recently used out
  // first.
  std::optional<std::filesystem::path> memo_dir;
  // A file memo_dir does not remember is indexed without its content hash: whatever needs it
  // asks with_content_hash(). A debugger waiting for a large module's quick side file (keyed
  // by the file's identity) does not wait for its hash too: 0.06 s for a 76 MB module.
  bool hash_later = false;
};

class ModuleIndex {
 public:
  explicit ModuleIndex(IndexOptions options = {}) : options_(std::move(options)) {}
  // Scans `paths`; each file skipped for a reason worth knowing adds a line to `notes`.
  // `previous`: an index of the same paths made before (a rescan): a file still as it was
  // then (path, device, inode, size and times) is taken from it, not read and hashed again.
  static ModuleIndex scan(const std::vector<std::string>& paths, const IndexOptions& options,
                          std::vector<std::string>& notes, const ModuleIndex* previous = nullptr);

  // nullptr when `build_id` (lowercase hex) is not indexed.
  const IndexedModule* find(std::string_view build_id) const;
  size_t size() const { return by_id_.size(); }
  uint64_t max_file_size() const { return options_.max_file_size; }

  // Indexes one more file (a core: the files it mapped), as scan() does each file it finds.
  void add_file(const std::string& path, std::vector<std::string>& notes) {
    add_file(path, nullptr, notes);
  }
  // The module of `build_id` with its content hash, hashed now if it was indexed without
  // (IndexOptions::hash_later); nullptr when not indexed, or changed since.
  const IndexedModule* hashed(std::string_view build_id);

 private:
  // `core_build_id`: the file is one a core names, with the build-id the core records for it
  // (empty: none); nullptr: a file given or found in a folder.
  void add_file(const std::string& path, const std::vector<uint8_t>* core_build_id,
                std::vector<std::string>& notes);
  void add_module(const IndexedModule& module, std::vector<std::string>& notes);
  // The files the core at `path` mapped (`shown`: its name in notes).
  void add_core(const std::string& path, const std::string& shown, std::vector<std::string>& notes);

  IndexOptions options_;
  std::unordered_map<std::string, IndexedModule> by_id_;
  // While scan() runs with a previous index: its modules by path.
  std::unordered_map<std::string, const IndexedModule*> previous_;
};

// Whether the file is still as it was indexed (same size, modification and change times).
bool unchanged(const IndexedModule& module);

// `module` with its content hash (a module indexed with IndexOptions::hash_later may have
// none yet), remembered in `memo_dir` when given; nullopt when the file changed since it was
// indexed.
std::optional<IndexedModule> with_content_hash(IndexedModule module,
                                               const std::optional<std::filesystem::path>& memo_dir);

// The indexed file opened for sending: not through a symlink, and the very file indexed
// (device, inode, size and times), or an error saying why not.
Result<UniqueFd> open_indexed_file(const IndexedModule& module);

// A build-id as a URL gives it, lowercased; empty when it is not 1 to 64 bytes of hex.
std::string normalize_build_id(std::string_view text);

}  // namespace unwindkit::server
