// Cores compressed as systemd-coredump leaves them (`core.NAME.UID.BOOTID.PID.USEC.zst`; `.xz`
// and `.lz4` where it is told to compress so), told by their magic bytes and read through
// their own libraries (libzstd, liblzma, liblz4) into an unnamed temporary file, so that their
// mapped files are indexed as a plain core's are.
#pragma once

#include <cstdint>
#include <string>

#include "unwindkit/error.h"
#include "unwindkit/server/unique_fd.h"

namespace unwindkit::server {

enum class Compression : uint8_t { None, Zstd, Xz, Lz4 };

// By the file's first bytes; None when it is none of the three (or unreadable).
Compression compression_of(const std::string& path);

// The file decompressed into an unnamed file in the temporary folder (gone when closed), at
// most `max_size` bytes of it: a larger one is refused, not cut.
Result<UniqueFd> decompress(const std::string& path, Compression compression, uint64_t max_size);

}  // namespace unwindkit::server
