// Scanning paths into the module index (see module_index.h).
#include "unwindkit/server/module_index.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/unwind/core_file.h"

namespace unwindkit::server {
namespace {

constexpr size_t kMinBuildIdHex = 2, kMaxBuildIdHex = 128;

std::string hex(const uint8_t* data, size_t size) {
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) fmt::format_to(std::back_inserter(out), "{:02x}", data[i]);
  return out;
}

std::string sha256(Bytes bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    return "";
  return hex(digest, length);
}

bool stat_file(const std::string& path, uint64_t& size, int64_t& mtime_ns) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  size = static_cast<uint64_t>(st.st_size);
  mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  return true;
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
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  return stat_file(module.path, size, mtime_ns) && size == module.size &&
         mtime_ns == module.mtime_ns;
}

bool read_indexed_file(const IndexedModule& module, std::string& out) {
  if (!unchanged(module)) return false;
  std::ifstream in(module.path, std::ios::binary);
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out.size() == module.size;  // a short read is a file changed under us
}

const IndexedModule* ModuleIndex::find(std::string_view build_id) const {
  auto it = by_id_.find(std::string(build_id));
  return it == by_id_.end() ? nullptr : &it->second;
}

void ModuleIndex::add_file(const std::string& path, bool from_core,
                           std::vector<std::string>& notes) {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  if (!stat_file(path, size, mtime_ns) || !looks_like_elf(path)) return;
  if (size > options_.max_file_size) {
    notes.push_back(fmt::format("{}: skipped, {} bytes is over the limit", path, size));
    return;
  }
  auto file = elf::ElfFile::open(path);
  if (!file) {
    notes.push_back(fmt::format("{}: skipped, {}", path, file.error().to_string()));
    return;
  }
  if (file->type() == elf::kTypeCore) {
    if (from_core) return;
    auto core = unwind::CoreFile::open(path);
    if (!core) {
      notes.push_back(fmt::format("{}: core skipped, {}", path, core.error().to_string()));
      return;
    }
    for (const unwind::MappedFile& mapped : core->mapped_files())
      if (!mapped.resolved.empty()) add_file(mapped.resolved, true, notes);
    return;
  }
  if (file->type() != elf::kTypeExec && file->type() != elf::kTypeDyn) return;
  auto build_id = file->build_id();
  if (!build_id || build_id->empty()) return;
  IndexedModule module{path, hex(build_id->data(), build_id->size()), sha256(file->image()), size,
                       mtime_ns};
  auto [it, added] = by_id_.emplace(module.build_id, module);
  if (!added && it->second.path != path && it->second.content_hash != module.content_hash)
    notes.push_back(fmt::format("{}: build-id {} already indexed from {}", path, module.build_id,
                                it->second.path));
}

ModuleIndex ModuleIndex::scan(const std::vector<std::string>& paths, const IndexOptions& options,
                              std::vector<std::string>& notes) {
  namespace fs = std::filesystem;
  ModuleIndex index;
  index.options_ = options;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      if (!fs::exists(path, ec)) notes.push_back(fmt::format("{}: no such file", path));
      index.add_file(path, false, notes);
      continue;
    }
    // Symlinked folders are not followed: a link cycle cannot make the scan endless.
    for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec)) index.add_file(it->path().string(), false, notes);
    if (ec) notes.push_back(fmt::format("{}: {}", path, ec.message()));
  }
  return index;
}

}  // namespace unwindkit::server
