// The synthesized-file cache (see debug_file_cache.h).
#include "unwindkit/server/debug_file_cache.h"

#include <fmt/format.h>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/server/folder_budget.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/server/sealed_file.h"

namespace unwindkit::server {
namespace {

// Bumped whenever synthesized files change, so stale disk entries are not reused.
constexpr int kFormat = 7;  // 7: sealed (sealed_file.h)
constexpr const char* kFileSuffix = ".debug";
constexpr const char* kNothingSuffix = ".none";  // nothing to add; holds the reason
constexpr const char* kChanged = "the file changed since it was indexed";
constexpr size_t kKeyHashChars = 32;  // of the content hash, in a key

// What shape of file `options` make, in its name: each LLDB takes its own.
const char* file_tag(const debuginfo::SynthesizeOptions& options) {
  switch (options.fallback_names) {
    case debuginfo::FallbackNames::Lldb: return options.lldb_loads_it ? "lldb" : "lldb-symtab";
    case debuginfo::FallbackNames::LldbNumbered: return "lldb-numbered";
    case debuginfo::FallbackNames::None: break;
  }
  return "plain";
}

// `durable` is false when the answer says nothing about the indexed content (a file that
// changed since it was indexed), so it is not kept on disk.
CachedFile synthesize_file(const IndexedModule& module, const debuginfo::SynthesizeOptions& options,
                           bool& durable) {
  durable = unchanged(module);
  if (!durable) return {nullptr, kChanged, false};
  // Read, not mapped: a file truncated under a mapping would end the process (SIGBUS). The
  // quick file states the tables alone: the code is not read.
  auto file = elf::ElfFile::open(
      module.path, options.analyze ? elf::ElfFile::Contents::Whole : elf::ElfFile::Contents::NoCode);
  durable = file ? file->image().size() == module.size : file.error().kind != ErrorKind::Io;
  if (!durable) return {nullptr, kChanged, false};
  if (!file) return {nullptr, file.error().to_string()};
  auto made = debuginfo::synthesize(*file, options);
  if (!made) return {nullptr, made.error().to_string()};
  std::string note;
  for (const Error& e : made->left_out) note += (note.empty() ? "" : "; ") + e.to_string();
  if (!note.empty()) note.insert(0, kLeftOutNote);
  if (made->bytes.empty() && !note.empty()) return {nullptr, note};
  if (made->bytes.empty()) {
    if (sframe::find_section(*file))
      return {nullptr, "nothing to add: its own CFI describes every function its SFrame does"};
    if (file->section(trace::kSectionName))
      return {nullptr, "nothing to add: its own DWARF has the lines its .trace states"};
    return {nullptr, "nothing to add (no SFrame, no .trace)"};
  }
  return {std::make_shared<const std::vector<uint8_t>>(std::move(made->bytes)), note};
}

}  // namespace

std::string_view cache_source_name(CacheSource source) {
  switch (source) {
    case CacheSource::Made: return "made";
    case CacheSource::Memory: return "memory";
    case CacheSource::Disk: return "disk";
  }
  return "?";
}

DebugFileCache::DebugFileCache(std::optional<std::filesystem::path> dir,
                               debuginfo::SynthesizeOptions options, CacheLimits limits)
    : dir_(std::move(dir)), options_(options), limits_(limits) {
  if (dir_) {
    std::error_code ec;
    std::filesystem::create_directories(*dir_, ec);
  }
}

// Build-id and content: a rebuilt file with a reused build-id gets a file of its own. A quick
// file is made while a debugger waits, before the content is hashed (IndexOptions::
// hash_later): it is keyed by the file's identity instead, as the index's memos are.
std::string DebugFileCache::key(const IndexedModule& module,
                                const debuginfo::SynthesizeOptions& options) {
  const char* names = file_tag(options);
  if (!options.analyze)
    return fmt::format("{}-i{:x}.{:x}.{:x}.{:x}.{:x}.v{}.{}.quick", module.build_id, module.device,
                       module.inode, module.size, static_cast<uint64_t>(module.mtime_ns),
                       static_cast<uint64_t>(module.ctime_ns), kFormat, names);
  return fmt::format("{}-{}.v{}.{}", module.build_id, module.content_hash.substr(0, kKeyHashChars),
                     kFormat, names);
}

bool DebugFileCache::may_hold(const IndexedModule& module, debuginfo::FallbackNames names) const {
  if (!dir_) return false;
  // key()'s analyzed form, whatever the hash.
  const std::string prefix = module.build_id + "-";
  const std::string suffix =
      fmt::format(".v{}.{}{}", kFormat, file_tag(named(names, FileKind::Analyzed)), kFileSuffix);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(*dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == prefix.size() + kKeyHashChars + suffix.size() && name.starts_with(prefix) &&
        name.ends_with(suffix))
      return true;
  }
  return false;
}

debuginfo::SynthesizeOptions DebugFileCache::named(debuginfo::FallbackNames names,
                                                   FileKind kind) const {
  debuginfo::SynthesizeOptions options = options_;
  options.fallback_names = names;
  options.analyze = kind == FileKind::Analyzed;
  return options;
}

std::optional<std::filesystem::path> DebugFileCache::stored(const IndexedModule& module,
                                                            debuginfo::FallbackNames names,
                                                            FileKind kind) const {
  if (!dir_) return std::nullopt;
  if (kind == FileKind::Analyzed && module.content_hash.empty()) {
    if (!may_hold(module, names)) return std::nullopt;
    auto hashed = with_content_hash(module, std::nullopt);
    return hashed ? stored(*hashed, names, kind) : std::nullopt;
  }
  auto path = *dir_ / (key(module, named(names, kind)) + kFileSuffix);
  if (!open_sealed(path, SealCheck::Shape)) return std::nullopt;
  mark_used(path);
  return path;
}

Result<SealedFile> DebugFileCache::open_stored(const IndexedModule& module,
                                               debuginfo::FallbackNames names, FileKind kind) const {
  if (!dir_) return fail(ErrorKind::NotFound, "cache", 0, module.build_id, "no cache folder");
  if (module.content_hash.empty() && kind == FileKind::Analyzed)
    return fail(ErrorKind::NotFound, "cache", 0, module.build_id, "not hashed");
  const auto path = *dir_ / (key(module, named(names, kind)) + kFileSuffix);
  auto file = open_sealed(path, SealCheck::Hash);
  if (file) mark_used(path);
  return file;
}

void DebugFileCache::remove(const IndexedModule& module, debuginfo::FallbackNames names,
                            FileKind kind) const {
  if (!dir_) return;
  std::error_code ec;
  std::filesystem::remove(*dir_ / (key(module, named(names, kind)) + kFileSuffix), ec);
}

std::optional<CachedFile> DebugFileCache::load(const std::string& key) const {
  if (!dir_) return std::nullopt;
  // A file that is not as this server sealed it (a link, another user's, truncated, altered)
  // is not used: the file is made again and written over it.
  if (const auto path = *dir_ / (key + kFileSuffix); auto bytes = read_sealed(path)) {
    mark_used(path);
    return CachedFile{std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)), ""};
  }
  if (const auto path = *dir_ / (key + kNothingSuffix); auto note = read_sealed(path)) {
    mark_used(path);
    return CachedFile{nullptr, std::string(note->begin(), note->end())};
  }
  return std::nullopt;
}

void DebugFileCache::store(const std::string& key, const CachedFile& file) const {
  if (!dir_) return;
  const auto path = *dir_ / (key + (file.bytes ? kFileSuffix : kNothingSuffix));
  write_sealed(path, file.bytes ? std::span<const uint8_t>(*file.bytes)
                                : std::span(reinterpret_cast<const uint8_t*>(file.note.data()),
                                            file.note.size()));
  if (limits_.disk) trim_folder(*dir_, *limits_.disk, {kFileSuffix, kNothingSuffix}, path);
}

CachedFile DebugFileCache::load_or_make(const IndexedModule& module,
                                        const debuginfo::SynthesizeOptions& options,
                                        const std::string& key, CacheSource& source) {
  if (auto cached = load(key)) {
    source = CacheSource::Disk;
    return *cached;
  }
  source = CacheSource::Made;
  bool durable = false;
  CachedFile file = synthesize_file(module, options, durable);
  ++made_;
  if (durable) store(key, file);
  return file;
}

CachedFile DebugFileCache::get(const IndexedModule& module, CacheSource& source,
                               debuginfo::FallbackNames names, FileKind kind) {
  if (kind == FileKind::Analyzed && module.content_hash.empty()) {  // keyed by it: hashed now
    auto hashed = with_content_hash(module, std::nullopt);
    if (!hashed) return {nullptr, kChanged, false};
    return get(*hashed, source, names, kind);
  }
  const debuginfo::SynthesizeOptions options = named(names, kind);
  const std::string k = key(module, options);
  std::shared_future<CachedFile> future;
  std::optional<std::promise<CachedFile>> promise;  // set when this request makes the file
  {
    std::lock_guard lock(mutex_);
    auto [it, added] = files_.try_emplace(k);
    if (added) it->second.file = promise.emplace().get_future().share();
    it->second.asked = ++asks_;
    future = it->second.file;
  }
  if (!promise) {  // another request made it, or is making it: wait for that one
    source = CacheSource::Memory;
    return future.get();
  }
  CachedFile file;
  try {
    file = load_or_make(module, options, k, source);
  } catch (const std::exception& e) {  // out of memory: a 404 for this request, not a crash
    file = {nullptr, e.what(), false};
  }
  promise->set_value(file);
  std::lock_guard lock(mutex_);
  Slot& slot = files_.at(k);  // only trim() removes a slot, and only a made one
  slot.made = true;
  slot.size = (file.bytes ? file.bytes->size() : 0) + file.note.size();
  held_ += slot.size;
  trim();
  return file;
}

void DebugFileCache::trim() {
  while (held_ > limits_.memory) {
    auto oldest = files_.end();
    for (auto it = files_.begin(); it != files_.end(); ++it)
      if (it->second.made && (oldest == files_.end() || it->second.asked < oldest->second.asked))
        oldest = it;
    if (oldest == files_.end()) return;
    held_ -= oldest->second.size;
    files_.erase(oldest);
  }
}

}  // namespace unwindkit::server
