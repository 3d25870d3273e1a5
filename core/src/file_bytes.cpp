#include "unwindkit/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace unwindkit {

namespace {

// read(), again when a signal interrupted it.
ssize_t read_some(int fd, uint8_t* to, size_t size) {
  ssize_t n = 0;
  do {
    n = ::read(fd, to, size);
  } while (n < 0 && errno == EINTR);
  return n;
}

Result<std::vector<uint8_t>> read_open(int fd, const std::string& path) {
  const auto io_error = [&] { return fail(ErrorKind::Io, path, 0, "file", std::strerror(errno)); };
  std::vector<uint8_t> out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = read_some(fd, out.data() + got, out.size() - got);
      if (n < 0) return io_error();
      if (n == 0) break;  // it shrank meanwhile
      got += static_cast<size_t>(n);
    }
    out.resize(got);
    return out;
  }
  // A pipe, to its end. A directory fails here (EISDIR).
  std::vector<uint8_t> chunk(size_t{64} << 10);
  for (;;) {
    const ssize_t n = read_some(fd, chunk.data(), chunk.size());
    if (n < 0) return io_error();
    if (n == 0) return out;
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
}

}  // namespace

Result<std::vector<uint8_t>> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(ErrorKind::Io, path, 0, "file", std::strerror(errno));
  auto out = read_open(fd, path);
  ::close(fd);
  return out;
}

Result<FileImage> map_file(const std::string& path) {
  if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    struct stat st {};
    void* addr = MAP_FAILED;
    size_t size = 0;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      size = static_cast<size_t>(st.st_size);
      addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    ::close(fd);
    if (addr != MAP_FAILED) {
      std::shared_ptr<const void> mapping(
          addr, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
      return FileImage{std::move(mapping), Bytes(static_cast<const uint8_t*>(addr), size)};
    }
  }
  auto bytes = read_file(path);
  if (!bytes) return tl::unexpected(bytes.error());
  auto kept = std::make_shared<const std::vector<uint8_t>>(std::move(*bytes));
  const Bytes view(*kept);
  return FileImage{std::move(kept), view};
}

}  // namespace unwindkit
