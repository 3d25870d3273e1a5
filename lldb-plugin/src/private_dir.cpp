// Private folders (see private_dir.h).
#include "private_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace unwindkit::lldb_plugin {

bool private_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return false;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
    return false;
  // Others may read (a user's own cache folder often is 0755); they may not write.
  return (st.st_mode & 0022) == 0 || ::chmod(dir.c_str(), st.st_mode & 07755) == 0;
}

std::filesystem::path side_file_cache_dir() {
  if (const char* dir = std::getenv("UNWINDKIT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "unwindkit" / "lldb";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "unwindkit" / "lldb";
  std::error_code ec;  // TMPDIR naming no folder: none (private_dir refuses it)
  const auto tmp = std::filesystem::temp_directory_path(ec);
  return ec ? std::filesystem::path() : tmp / fmt::format("unwindkit-lldb-{}", ::getuid());
}

}  // namespace unwindkit::lldb_plugin
