// Scanning paths into the module index (see module_index.h).
#include "unwindkit/server/module_index.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/server/folder_budget.h"
#include "unwindkit/unwind/core_file.h"
#include "compressed_core.h"
#include "sha256.h"
#include "whole_file.h"

namespace unwindkit::server {
namespace {

constexpr size_t kMinBuildIdHex = 2, kMaxBuildIdHex = 128;
constexpr std::string_view kCoreName = "core";  // how systemd-coredump's file names start

// What tells one version of a file from another without reading it.
struct FileIdentity {
  uint64_t size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  uint64_t device = 0, inode = 0;
};

int64_t nanoseconds(const struct timespec& t) {
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

bool stat_file(const std::string& path, FileIdentity& id) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  id = {static_cast<uint64_t>(st.st_size), nanoseconds(st.st_mtim), nanoseconds(st.st_ctim),
        static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  return true;
}

// The memo of a file's build-id and content hash (IndexOptions::memo_dir), one small file per
// device and inode holding "size mtime ctime build-id hash". Every write to a file moves its
// change time, which no one can set back; a file replaced by rename has another inode, or a
// new change time if the inode is reused.
constexpr size_t kSha256Hex = 64;
// The memos kept, all files together, least recently used out first: a memo takes about 150
// bytes, so the last 7,000 or so files met are remembered.
constexpr uint64_t kMemoBytes = uint64_t{1} << 20;
// A file changed twice within its file system's timestamp granularity keeps the same times:
// only a file whose last change is this long past is remembered (git's racy-index rule).
constexpr int64_t kMemoSettledNs = 2'000'000'000;

std::filesystem::path memo_path(const std::filesystem::path& dir, const FileIdentity& id) {
  return dir / fmt::format("{:x}-{:x}", id.device, id.inode);
}

std::string memo_times(const FileIdentity& id) {
  return fmt::format("{} {} {}", id.size, id.mtime_ns, id.ctime_ns);
}

// (build-id, content hash) remembered for exactly this version of the file.
std::optional<std::pair<std::string, std::string>> recall(const std::filesystem::path& dir,
                                                          const FileIdentity& id) {
  const auto path = memo_path(dir, id);
  std::ifstream in(path);
  std::string size, mtime, ctime, build_id, hash;
  if (!(in >> size >> mtime >> ctime >> build_id >> hash)) return std::nullopt;
  if (fmt::format("{} {} {}", size, mtime, ctime) != memo_times(id) ||
      normalize_build_id(build_id) != build_id || hash.size() != kSha256Hex)
    return std::nullopt;
  mark_used(path);
  return std::pair{build_id, hash};
}

void remember(const std::filesystem::path& dir, const FileIdentity& id,
              const IndexedModule& module) {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  if (nanoseconds(now) - id.ctime_ns < kMemoSettledNs) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto path = memo_path(dir, id);
  write_atomically(path, {fmt::format("{} {} {}\n", memo_times(id), module.build_id,
                                      module.content_hash)});
  trim_folder(dir, kMemoBytes, {""}, path);  // the folder holds memos alone
}

bool looks_like_elf(const std::string& path) {
  char magic[4] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(magic, sizeof magic) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

}  // namespace

std::string normalize_build_id(std::string_view text) {
  if (text.size() < kMinBuildIdHex || text.size() > kMaxBuildIdHex || text.size() % 2 != 0)
    return "";
  std::string out;
  for (char c : text) {
    if (c >= '0' && c <= '9') out += c;
    else if (c >= 'a' && c <= 'f') out += c;
    else if (c >= 'A' && c <= 'F') out += static_cast<char>(c - 'A' + 'a');
    else return "";
  }
  return out;
}

bool unchanged(const IndexedModule& module) {
  FileIdentity id;
  return stat_file(module.path, id) && id.size == module.size && id.mtime_ns == module.mtime_ns &&
         id.ctime_ns == module.ctime_ns;
}

Result<UniqueFd> open_indexed_file(const IndexedModule& module) {
  UniqueFd fd(::open(module.path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return fail(ErrorKind::Io, "index", 0, module.build_id, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_dev) != module.device ||
      static_cast<uint64_t>(st.st_ino) != module.inode ||
      static_cast<uint64_t>(st.st_size) != module.size ||
      nanoseconds(st.st_mtim) != module.mtime_ns || nanoseconds(st.st_ctim) != module.ctime_ns)
    return fail(ErrorKind::Io, "index", 0, module.build_id, "the file changed since it was indexed");
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

const IndexedModule* ModuleIndex::find(std::string_view build_id) const {
  auto it = by_id_.find(std::string(build_id));
  return it == by_id_.end() ? nullptr : &it->second;
}

void ModuleIndex::add_file(const std::string& given, const std::vector<uint8_t>* core_build_id,
                           std::vector<std::string>& notes) {
  // The symlink rule (docs/debuginfod.md): a path given is taken as it resolves now, and the
  // file is then served only at that path, never through a link; a file a core names is
  // taken only at the path the kernel recorded, which has no link in it.
  std::string path = given;
  char real[PATH_MAX];
  if (::realpath(given.c_str(), real) == nullptr) return;
  if (core_build_id != nullptr && path != real) {
    notes.push_back(fmt::format("{}: skipped, a file a core names is not followed through a "
                                "symlink (it resolves to {})", given, real));
    return;
  }
  path = real;
  FileIdentity id;
  if (!stat_file(path, id)) return;
  // A compressed core (systemd-coredump's names start so) is read through its library.
  if (core_build_id == nullptr && std::filesystem::path(path).filename().string().starts_with(kCoreName))
    if (const Compression compression = compression_of(path); compression != Compression::None) {
      Result<UniqueFd> plain = decompress(path, compression, options_.max_file_size);
      if (!plain)
        notes.push_back(fmt::format("{}: compressed core skipped, {}", path, plain.error().to_string()));
      else
        add_core(fmt::format("/proc/self/fd/{}", plain->get()), path, notes);
      return;
    }
  if (!looks_like_elf(path)) return;
  if (id.size > options_.max_file_size) {
    notes.push_back(fmt::format("{}: skipped, {} bytes is over the limit", path, id.size));
    return;
  }
  // A file a core names is the one the process mapped only if it has the build-id the core's
  // copy of its first page records: another file at that path now is not indexed.
  auto from_the_core = [&](const std::string& build_id) {
    if (core_build_id == nullptr) return true;
    if (core_build_id->empty())
      notes.push_back(fmt::format("{}: skipped, the core records no build-id for it", path));
    else if (to_hex(*core_build_id) != build_id)
      notes.push_back(fmt::format("{}: skipped, build-id {} is not the {} the core records", path,
                                  build_id, to_hex(*core_build_id)));
    else
      return true;
    return false;
  };
  if (auto it = previous_.find(path); it != previous_.end()) {
    const IndexedModule& known = *it->second;
    if (known.size == id.size && known.mtime_ns == id.mtime_ns && known.ctime_ns == id.ctime_ns &&
        known.device == id.device && known.inode == id.inode) {
      if (from_the_core(known.build_id)) add_module(known, notes);
      return;
    }
  }
  if (options_.memo_dir) {
    if (auto known = recall(*options_.memo_dir, id)) {
      if (from_the_core(known->first))
        add_module({path, known->first, known->second, id.size, id.mtime_ns, id.ctime_ns,
                    id.device, id.inode},
                   notes);
      return;
    }
  }
  auto file = elf::ElfFile::open(path, elf::ElfFile::Contents::Headers);
  if (!file) {
    notes.push_back(fmt::format("{}: skipped, {}", path, file.error().to_string()));
    return;
  }
  if (file->type() == elf::kTypeCore) {
    if (core_build_id == nullptr) add_core(path, path, notes);
    return;
  }
  if (file->type() != elf::kTypeExec && file->type() != elf::kTypeDyn) return;
  auto build_id = file->build_id();
  if (!build_id || build_id->empty() || !from_the_core(to_hex(*build_id))) return;
  IndexedModule module{path,        to_hex(*build_id), "", id.size,
                       id.mtime_ns, id.ctime_ns, id.device, id.inode};
  if (!options_.hash_later) {
    auto with_hash = with_content_hash(std::move(module), options_.memo_dir);
    if (!with_hash) {
      notes.push_back(fmt::format("{}: skipped, it changed while read", path));
      return;
    }
    module = std::move(*with_hash);
  }
  add_module(module, notes);
}

void ModuleIndex::add_core(const std::string& path, const std::string& shown,
                           std::vector<std::string>& notes) {
  auto core = unwind::CoreFile::open(path);
  if (!core) {
    notes.push_back(fmt::format("{}: core skipped, {}", shown, core.error().to_string()));
    return;
  }
  for (const unwind::MappedFile& mapped : core->mapped_files())
    if (!mapped.resolved.empty()) add_file(mapped.resolved, &mapped.core_build_id, notes);
}

const IndexedModule* ModuleIndex::hashed(std::string_view build_id) {
  auto it = by_id_.find(std::string(build_id));
  if (it == by_id_.end()) return nullptr;
  if (it->second.content_hash.empty()) {
    auto with_hash = with_content_hash(it->second, options_.memo_dir);
    if (!with_hash) return nullptr;
    it->second = std::move(*with_hash);
  }
  return &it->second;
}

std::optional<IndexedModule> with_content_hash(IndexedModule module,
                                               const std::optional<std::filesystem::path>& memo_dir) {
  if (!module.content_hash.empty()) return module;
  // Hashed between two looks at the file's identity: a file written meanwhile is not hashed
  // as the version indexed.
  if (!unchanged(module)) return std::nullopt;
  const UniqueFd fd(::open(module.path.c_str(), O_RDONLY | O_CLOEXEC));
  const std::optional<Sha256> hash = fd ? sha256_of_fd(fd.get(), module.size) : std::nullopt;
  if (!hash || !unchanged(module)) return std::nullopt;
  module.content_hash = to_hex(*hash);
  if (memo_dir)
    remember(*memo_dir, {module.size, module.mtime_ns, module.ctime_ns, module.device, module.inode},
             module);
  return module;
}

void ModuleIndex::add_module(const IndexedModule& module, std::vector<std::string>& notes) {
  auto [it, added] = by_id_.emplace(module.build_id, module);
  if (!added && it->second.path != module.path && it->second.content_hash != module.content_hash)
    notes.push_back(fmt::format("{}: build-id {} already indexed from {}", module.path, module.build_id,
                                it->second.path));
}

ModuleIndex ModuleIndex::scan(const std::vector<std::string>& paths, const IndexOptions& options,
                              std::vector<std::string>& notes, const ModuleIndex* previous) {
  namespace fs = std::filesystem;
  ModuleIndex index;
  index.options_ = options;
  if (previous != nullptr)
    for (const auto& [id, module] : previous->by_id_) index.previous_.emplace(module.path, &module);
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      if (!fs::exists(path, ec)) notes.push_back(fmt::format("{}: no such file", path));
      index.add_file(path, nullptr, notes);
      continue;
    }
    // Links in a folder are not followed, to folders (a link cycle cannot make the scan
    // endless) or to files (a link planted in a fleet's build folder cannot bring in a file
    // from elsewhere): as elfutils' debuginfod without -L.
    for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec))
      if (!it->is_symlink(ec) && it->is_regular_file(ec))
        index.add_file(it->path().string(), nullptr, notes);
    if (ec) notes.push_back(fmt::format("{}: {}", path, ec.message()));
  }
  index.previous_.clear();
  return index;
}

}  // namespace unwindkit::server
