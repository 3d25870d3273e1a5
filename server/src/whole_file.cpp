// Files written whole (see whole_file.h).
#include "whole_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "unwindkit/server/unique_fd.h"

namespace unwindkit::server {
namespace {

// Names tried for the temporary file before giving up (each taken one was planted, or is
// another writer's).
constexpr int kTemporaryNames = 8;

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool write_atomically(const std::filesystem::path& path, std::initializer_list<std::string_view> pieces) {
  // A name no other writer uses: other processes have other pids, other writes here other
  // counts. (Not a hash of the bytes: a side file's took 10 ms of a debugger's wait.)
  static std::atomic<uint64_t> writes{0};
  for (int attempt = 0; attempt < kTemporaryNames; ++attempt) {
    auto tmp = path;
    tmp += fmt::format(".tmp{}.{}", ::getpid(), writes.fetch_add(1));
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd && errno == EEXIST) continue;
    if (!fd) return false;
    bool ok = true;
    for (std::string_view piece : pieces) ok = ok && write_all(fd.get(), piece);
    fd.reset();
    std::error_code ec;
    if (ok) std::filesystem::rename(tmp, path, ec);
    if (!ok || ec) std::filesystem::remove(tmp, ec);
    return ok && !ec;
  }
  return false;
}

}  // namespace unwindkit::server
