// Synthesized debug files (debuginfo/synthesize.h), made once per module content: kept in
// memory and, when given a folder, on disk, so that a restarted server finds them again.
// Concurrent requests for a file being made wait for that one synthesis.
#pragma once

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/server/module_index.h"

namespace unwindkit::server {

struct CachedFile {
  std::shared_ptr<const std::string> bytes;  // null: nothing to add, or it could not be made
  std::string note;                          // why not, or what was left out
};

enum class CacheSource : uint8_t { Made, Memory, Disk };
std::string_view cache_source_name(CacheSource source);

class DebugFileCache {
 public:
  DebugFileCache(std::optional<std::filesystem::path> dir, debuginfo::SynthesizeOptions options);

  // The file for `module`, made if no one has made it yet, with functions known only from
  // SFrame named as `names` says (in place of the options' fallback_names): each naming is a
  // file of its own.
  CachedFile get(const IndexedModule& module, CacheSource& source, debuginfo::FallbackNames names);
  // Where the file for `module`, named as `names` says, is kept on disk, when one was made
  // before (by any process using this folder).
  std::optional<std::filesystem::path> stored(const IndexedModule& module,
                                              debuginfo::FallbackNames names) const;
  // How many files this process synthesized (each content once).
  uint64_t made() const { return made_; }

 private:
  static std::string key(const IndexedModule& module, const debuginfo::SynthesizeOptions& options);
  debuginfo::SynthesizeOptions named(debuginfo::FallbackNames names) const;
  CachedFile load_or_make(const IndexedModule& module, const debuginfo::SynthesizeOptions& options,
                          const std::string& key, CacheSource& source);
  std::optional<CachedFile> load(const std::string& key) const;
  void store(const std::string& key, const CachedFile& file) const;

  std::optional<std::filesystem::path> dir_;
  debuginfo::SynthesizeOptions options_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<CachedFile>> files_;
  std::atomic<uint64_t> made_{0};
};

}  // namespace unwindkit::server
