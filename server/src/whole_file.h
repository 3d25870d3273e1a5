// Whole-file reads and writes shared by the server's caches (synthesized files, the index's
// memo of content hashes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace unwindkit::server {

// The whole file in one read; false when it cannot be opened or read.
bool read_whole(const std::filesystem::path& path, std::string& out);
bool read_whole(const std::filesystem::path& path, std::vector<uint8_t>& out);

// Written under a temporary name and renamed: a reader (or a restart) never sees half a file.
void write_atomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace unwindkit::server
