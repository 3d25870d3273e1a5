// Synthesized debug files (debuginfo/synthesize.h), made once per module content: kept on
// disk when given a folder, so that a restarted server finds them again, and in memory up to
// a budget. Concurrent requests for a file being made wait for that one synthesis.
#pragma once

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/server/sealed_file.h"
#include "unwindkit/server/module_index.h"

namespace unwindkit::server {

// How a note naming the tables left out of a file starts (kept with the answer on disk).
inline constexpr std::string_view kLeftOutNote = "left out: ";

struct CachedFile {
  // null: nothing to add, or it could not be made
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  std::string note;                          // why not, or what was left out
  // false: the answer says nothing lasting about the module's content (its file changed since
  // it was indexed, or making it ran out of memory), so it is not kept either.
  bool lasting = true;
  // Tables present were left out (the note names them): the quick file's checks are not the
  // analyzed file's, so the other kind may keep what this one left out.
  bool left_out() const { return note.starts_with(kLeftOutNote); }
};

enum class CacheSource : uint8_t { Made, Memory, Disk };
std::string_view cache_source_name(CacheSource source);

// Bytes of made files held in memory by default (the server's): the files most recently asked
// for stay, so concurrent clients share one copy; older ones are read back from the folder,
// or made again without one. A fleet's server sees a file per build it serves.
constexpr size_t kDefaultMemoryBudget = size_t{256} << 20;

struct CacheLimits {
  // Bytes of files kept in memory once made (least recently asked for out first); a file
  // being made or sent stays alive with its users either way.
  size_t memory = kDefaultMemoryBudget;
  // Bytes of files kept in the folder (least recently used out first: folder_budget.h);
  // nullopt: no bound (a server's folder, sized by whoever runs it).
  std::optional<uint64_t> disk;
};

// Which file of a module: analyzed, or quick (SynthesizeOptions::analyze false: what a
// debugger gets first for a large module while the analyzed one is made). Each is a file of
// its own.
enum class FileKind : uint8_t { Analyzed, Quick };

class DebugFileCache {
 public:
  DebugFileCache(std::optional<std::filesystem::path> dir, debuginfo::SynthesizeOptions options,
                 CacheLimits limits = {});

  // The file for `module`, made if no one has made it yet, with functions known only from
  // SFrame named as `names` says (in place of the options' fallback_names): each naming is a
  // file of its own.
  CachedFile get(const IndexedModule& module, CacheSource& source, debuginfo::FallbackNames names,
                 FileKind kind = FileKind::Analyzed);
  // Where the file for `module`, named as `names` says, is kept on disk, when one was made
  // before (by any process using this folder).
  std::optional<std::filesystem::path> stored(const IndexedModule& module,
                                              debuginfo::FallbackNames names,
                                              FileKind kind = FileKind::Analyzed) const;
  // The kept file for `module` opened for sending, its bytes checked against their seal
  // (sealed_file.h): what the server streams from disk instead of from memory.
  Result<SealedFile> open_stored(const IndexedModule& module, debuginfo::FallbackNames names,
                                 FileKind kind = FileKind::Analyzed) const;
  // Whether the folder may hold the analyzed file of `module`, named as `names` says: whether
  // it holds one of its build-id for any content. Looked at before hashing a module indexed
  // without its hash (IndexOptions::hash_later) to find its own.
  bool may_hold(const IndexedModule& module, debuginfo::FallbackNames names) const;
  // Removes the kept file for `module` of this naming and kind, if any (a quick file once the
  // analyzed one is made). A debugger that opened it keeps reading it.
  void remove(const IndexedModule& module, debuginfo::FallbackNames names, FileKind kind) const;
  // How many files this process synthesized (each content once while it stays in memory or
  // on disk).
  uint64_t made() const { return made_; }
  bool has_folder() const { return dir_.has_value(); }

 private:
  static std::string key(const IndexedModule& module, const debuginfo::SynthesizeOptions& options);
  debuginfo::SynthesizeOptions named(debuginfo::FallbackNames names, FileKind kind) const;
  CachedFile load_or_make(const IndexedModule& module, const debuginfo::SynthesizeOptions& options,
                          const std::string& key, CacheSource& source);
  std::optional<CachedFile> load(const std::string& key) const;
  void store(const std::string& key, const CachedFile& file) const;

  // Under mutex_: drops the least recently asked-for made files until the rest fit the budget.
  void trim();

  struct Slot {
    std::shared_future<CachedFile> file;
    uint64_t asked = 0;  // when last asked for (a counter)
    size_t size = 0;     // counted once made
    bool made = false;
  };

  std::optional<std::filesystem::path> dir_;
  debuginfo::SynthesizeOptions options_;
  CacheLimits limits_;
  std::mutex mutex_;
  std::unordered_map<std::string, Slot> files_;
  uint64_t asks_ = 0;
  size_t held_ = 0;  // bytes of the made files in files_
  std::atomic<uint64_t> made_{0};
};

}  // namespace unwindkit::server
