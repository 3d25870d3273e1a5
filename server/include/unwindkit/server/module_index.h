// The modules a debuginfod server may serve, by build-id: the ELF executables and shared
// objects found under the paths it was given (folders scanned recursively), and the files
// that cores given to it mapped (NT_FILE). Nothing outside this index is ever served.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace unwindkit::server {

struct IndexedModule {
  std::string path;
  std::string build_id;      // lowercase hex
  std::string content_hash;  // SHA-256 of the file, lowercase hex
  uint64_t size = 0;         // size and mtime when indexed: a file changed since is not served
  int64_t mtime_ns = 0;
};

struct IndexOptions {
  uint64_t max_file_size = uint64_t{512} << 20;  // larger files are skipped (bounds each request)
};

class ModuleIndex {
 public:
  // Scans `paths`; each file skipped for a reason worth knowing adds a line to `notes`.
  static ModuleIndex scan(const std::vector<std::string>& paths, const IndexOptions& options,
                          std::vector<std::string>& notes);

  // nullptr when `build_id` (lowercase hex) is not indexed.
  const IndexedModule* find(std::string_view build_id) const;
  size_t size() const { return by_id_.size(); }
  uint64_t max_file_size() const { return options_.max_file_size; }

  // Indexes one more file (a core: the files it mapped), as scan() does each file it finds.
  void add_file(const std::string& path, std::vector<std::string>& notes) {
    add_file(path, false, notes);
  }

 private:
  void add_file(const std::string& path, bool from_core, std::vector<std::string>& notes);

  IndexOptions options_;
  std::unordered_map<std::string, IndexedModule> by_id_;
};

// Whether the file is still as it was indexed (same size and modification time).
bool unchanged(const IndexedModule& module);

// The whole file, or nothing when it cannot be read or has changed since it was indexed.
bool read_indexed_file(const IndexedModule& module, std::string& out);

// A build-id as a URL gives it, lowercased; empty when it is not 1 to 64 bytes of hex.
std::string normalize_build_id(std::string_view text);

}  // namespace unwindkit::server
