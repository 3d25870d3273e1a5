// Sealed cache files (see sealed_file.h).
#include "unwindkit/server/sealed_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "sha256.h"
#include "whole_file.h"

namespace unwindkit::server {
namespace {

// The seal: magic, the size of the bytes before it (little-endian), their SHA-256.
constexpr char kSealMagic[8] = {'u', 'k', 's', 'e', 'a', 'l', '0', '1'};
constexpr size_t kSizeBytes = 8;
static_assert(kSealBytes == sizeof kSealMagic + kSizeBytes + std::tuple_size_v<Sha256>);
constexpr std::string_view kSection = "cache";

std::array<uint8_t, kSealBytes> seal_of(std::span<const uint8_t> bytes) {
  std::array<uint8_t, kSealBytes> seal{};
  std::memcpy(seal.data(), kSealMagic, sizeof kSealMagic);
  for (size_t i = 0; i < kSizeBytes; ++i)
    seal[sizeof kSealMagic + i] = static_cast<uint8_t>(uint64_t{bytes.size()} >> (8 * i));
  const Sha256 digest = sha256_of(bytes);
  std::copy(digest.begin(), digest.end(), seal.begin() + sizeof kSealMagic + kSizeBytes);
  return seal;
}

// Files whose bytes were found to match their seal, by identity: a file is hashed once, not
// per request, until it is written (its change time moves) or replaced (another inode).
// Bounded: forgotten all at once when full (they are hashed again).
using Identity = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;
constexpr size_t kRememberedSeals = 4096;
std::mutex seals_mutex;
std::set<Identity> seals_checked;

Identity identity_of(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size,
          int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
          int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec};
}

}  // namespace

bool write_sealed(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  const auto seal = seal_of(bytes);
  return write_atomically(path, {std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                                 std::string_view(reinterpret_cast<const char*>(seal.data()), seal.size())});
}

Result<SealedFile> open_sealed(const std::filesystem::path& path, SealCheck check) {
  const std::string name = path.filename().string();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return fail(ErrorKind::Io, kSection, 0, name, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail(ErrorKind::Io, kSection, 0, name, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(kSection, 0, name, "not a regular file");
  if (st.st_uid != ::geteuid())
    return fail(kSection, 0, name, fmt::format("owned by uid {}, not this server's", st.st_uid));
  // O_NONBLOCK kept a FIFO from blocking the open; reads of a regular file ignore it, but the
  // HTTP stack that sends the file is told of none.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  const auto file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < kSealBytes) return fail(ErrorKind::Truncated, kSection, 0, name, "shorter than its seal");
  std::array<uint8_t, kSealBytes> seal{};
  const uint64_t size = file_size - kSealBytes;
  if (::pread(fd.get(), seal.data(), seal.size(), static_cast<off_t>(size)) != static_cast<ssize_t>(seal.size()))
    return fail(ErrorKind::Io, kSection, size, name, "the seal cannot be read");
  if (std::memcmp(seal.data(), kSealMagic, sizeof kSealMagic) != 0)
    return fail(kSection, size, name, "no seal (not written by this server)");
  uint64_t sealed_size = 0;
  for (size_t i = 0; i < kSizeBytes; ++i) sealed_size |= uint64_t{seal[sizeof kSealMagic + i]} << (8 * i);
  if (sealed_size != size)
    return fail(ErrorKind::Truncated, kSection, size, name,
                fmt::format("{} bytes, its seal says {}", size, sealed_size));
  if (check == SealCheck::Hash) {
    const Identity id = identity_of(st);
    std::unique_lock lock(seals_mutex);
    if (!seals_checked.contains(id)) {
      lock.unlock();
      const std::optional<Sha256> digest = sha256_of_fd(fd.get(), size);
      if (!digest) return fail(ErrorKind::Io, kSection, 0, name, "changed while read");
      if (!std::equal(digest->begin(), digest->end(), seal.begin() + sizeof kSealMagic + kSizeBytes))
        return fail(kSection, 0, name, "its bytes do not match their seal");
      lock.lock();
      if (seals_checked.size() >= kRememberedSeals) seals_checked.clear();
      seals_checked.insert(id);
    }
  }
  return SealedFile{std::move(fd), size};
}

Result<std::vector<uint8_t>> read_sealed(const std::filesystem::path& path) {
  auto file = open_sealed(path, SealCheck::Hash);
  if (!file) return tl::unexpected(file.error());
  std::vector<uint8_t> bytes(static_cast<size_t>(file->size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(file->fd.get(), bytes.data() + done, bytes.size() - done,
                              static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return fail(ErrorKind::Truncated, kSection, done, path.filename().string(), "changed while read");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

}  // namespace unwindkit::server
