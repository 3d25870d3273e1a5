// Folders of made files kept between sessions (side files, synthesized debug files), held to
// a size: the least recently used files go first. A file's modification time says when it
// was last used; mark_used moves it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace unwindkit::server {

// A file just found again: it becomes the most recently used.
void mark_used(const std::filesystem::path& file);

// Removes the least recently used regular files of `dir` (not its subfolders) whose names end
// with one of `suffixes` (an empty suffix: every file), until those left take at most
// `max_bytes`; `keep` (the file just made) stays whatever it takes. Temporary files a writer
// that died left behind (".tmp" in the name, an hour old) go too. A file another process
// removes meanwhile is skipped.
void trim_folder(const std::filesystem::path& dir, uint64_t max_bytes,
                 const std::vector<std::string_view>& suffixes,
                 const std::filesystem::path& keep);

}  // namespace unwindkit::server
