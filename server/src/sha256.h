// SHA-256 of files and bytes (Nettle's: sha256.cpp says why not OpenSSL's), for the index's
// content hashes and the seals of the cache folder's files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace unwindkit::server {

using Sha256 = std::array<uint8_t, 32>;

Sha256 sha256_of(std::span<const uint8_t> bytes);
// Of the first `size` bytes of the open file; nullopt when it holds fewer (changed while read)
// or cannot be read.
std::optional<Sha256> sha256_of_fd(int fd, uint64_t size);

// Lowercase hex of the bytes (a digest, a build-id).
std::string to_hex(std::span<const uint8_t> bytes);

}  // namespace unwindkit::server
