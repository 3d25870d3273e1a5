// Folders held to a size (see folder_budget.h).
#include "unwindkit/server/folder_budget.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <tuple>
#include <vector>

namespace unwindkit::server {
namespace {

// A temporary file this old was left by a writer that died (a write takes seconds at most).
constexpr auto kStaleTemporary = std::chrono::hours(1);

}  // namespace

void mark_used(const std::filesystem::path& file) {
  std::error_code ec;
  std::filesystem::last_write_time(file, std::filesystem::file_time_type::clock::now(), ec);
}

void trim_folder(const std::filesystem::path& dir, uint64_t max_bytes,
                 const std::vector<std::string_view>& suffixes,
                 const std::filesystem::path& keep) {
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  std::vector<std::tuple<std::filesystem::file_time_type, uint64_t, std::filesystem::path>> files;
  uint64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code entry_ec;
    if (!entry.is_regular_file(entry_ec)) continue;
    const std::string name = entry.path().filename().string();
    const auto used = entry.last_write_time(entry_ec);
    const uint64_t size = entry.file_size(entry_ec);
    if (entry_ec) continue;  // removed meanwhile
    if (name.find(".tmp") != std::string::npos) {
      if (now - used > kStaleTemporary) std::filesystem::remove(entry.path(), entry_ec);
      continue;
    }
    if (std::none_of(suffixes.begin(), suffixes.end(),
                     [&](std::string_view s) { return name.ends_with(s); }))
      continue;
    total += size;
    if (entry.path() != keep) files.emplace_back(used, size, entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& [used, size, path] : files) {
    if (total <= max_bytes) break;
    std::error_code remove_ec;
    std::filesystem::remove(path, remove_ec);
    total -= size;
  }
}

}  // namespace unwindkit::server
