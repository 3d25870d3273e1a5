// Files written whole, shared by the server's caches (sealed synthesized files, the index's
// memo of content hashes).
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string_view>

namespace unwindkit::server {

// `pieces`, one after the other, written under a temporary name and renamed: a reader (or a
// restart) never sees half a file. The temporary file is made with O_EXCL|O_NOFOLLOW: a file
// or link planted at its name is neither followed nor overwritten (another name is tried).
// False when it could not be written.
bool write_atomically(const std::filesystem::path& path, std::initializer_list<std::string_view> pieces);

}  // namespace unwindkit::server
