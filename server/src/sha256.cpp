// SHA-256 (see sha256.h).
#include "sha256.h"

#include <fmt/format.h>
#include <nettle/sha2.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <memory>

namespace unwindkit::server {

static_assert(std::tuple_size_v<Sha256> == SHA256_DIGEST_SIZE);

// Nettle's SHA-256, not OpenSSL's: OpenSSL 3 builds its provider's whole algorithm table on
// the first digest a process asks for, 1.2 ms (3 M instructions inside LLDB) before the first
// byte is hashed, in every debugger session that indexes a module.
Sha256 sha256_of(std::span<const uint8_t> bytes) {
  sha256_ctx context;
  sha256_init(&context);
  sha256_update(&context, bytes.size(), bytes.data());
  Sha256 digest{};
  sha256_digest(&context, digest.size(), digest.data());
  return digest;
}

// Read a share at a time, not whole: the file's pages are copied through one small buffer
// instead of each being given memory of its own (a 76 MB module's read took 0.05 s, in LLDB
// while its loading thread waits).
std::optional<Sha256> sha256_of_fd(int fd, uint64_t size) {
  constexpr size_t kShare = size_t{1} << 20;
  const std::unique_ptr<uint8_t[]> share(new uint8_t[kShare]);
  sha256_ctx context;
  sha256_init(&context);
  uint64_t done = 0;
  while (done < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kShare, size - done));
    const ssize_t n = ::pread(fd, share.get(), want, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    sha256_update(&context, static_cast<size_t>(n), share.get());
    done += static_cast<uint64_t>(n);
  }
  Sha256 digest{};
  sha256_digest(&context, digest.size(), digest.data());
  return digest;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) fmt::format_to(std::back_inserter(out), "{:02x}", b);
  return out;
}

}  // namespace unwindkit::server
