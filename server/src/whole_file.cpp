// Whole-file reads and writes (see whole_file.h).
#include "whole_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>

namespace unwindkit::server {

namespace {

// Sized from fstat and read with read(2): a stream iterator copies a 100 MB file a byte at a
// time (0.7 s of a cached LLDB session).
template <typename Bytes>
bool read_whole_into(const std::filesystem::path& path, Bytes& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    out.resize(done);  // a file shortened under us: what is there (its readers check sizes)
  }
  ::close(fd);
  return ok;
}

}  // namespace

bool read_whole(const std::filesystem::path& path, std::string& out) {
  return read_whole_into(path, out);
}

bool read_whole(const std::filesystem::path& path, std::vector<uint8_t>& out) {
  return read_whole_into(path, out);
}

void write_atomically(const std::filesystem::path& path, std::string_view bytes) {
  // A name no other writer uses: other processes have other pids, other writes here other
  // counts. (Not a hash of the bytes: a side file's took 10 ms of a debugger's wait.)
  static std::atomic<uint64_t> writes{0};
  auto tmp = path;
  tmp += fmt::format(".tmp{}.{}", ::getpid(), writes.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace unwindkit::server
