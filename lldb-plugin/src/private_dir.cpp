// Private folders (see private_dir.h).
#include "private_dir.h"

#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace unwindkit::lldb_plugin
