// The cache folder's files, sealed as they are written: their bytes, then a seal holding the
// bytes' size and SHA-256. Whoever else can write to the folder (or plant a link in it) cannot
// make the server send what it did not write: a file is opened without following a symlink,
// must be a regular file owned by this process's user, and its bytes must match its seal
// before they are served. ELF readers ignore bytes past the sections, so a sealed debug file
// is still the ELF file for a debugger that opens it in place (the LLDB plugin links it into
// LLDB's download cache).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "unwindkit/server/unique_fd.h"
#include "unwindkit/error.h"

namespace unwindkit::server {

// Bytes the seal adds at the end of a file.
inline constexpr size_t kSealBytes = 48;

// Written under a temporary name (made with O_EXCL|O_NOFOLLOW, so a link planted there is not
// followed) and renamed into place: a reader never sees half a file. False when it could not.
bool write_sealed(const std::filesystem::path& path, std::span<const uint8_t> bytes);

struct SealedFile {
  UniqueFd fd;
  uint64_t size = 0;  // of the bytes sealed (the seal not counted)
};

enum class SealCheck : uint8_t {
  Shape,  // the file's type, owner and size against its seal (no read of its bytes)
  Hash,   // and its bytes' SHA-256: before serving them (remembered per file identity)
};

Result<SealedFile> open_sealed(const std::filesystem::path& path, SealCheck check);
// The sealed bytes, checked.
Result<std::vector<uint8_t>> read_sealed(const std::filesystem::path& path);

}  // namespace unwindkit::server
