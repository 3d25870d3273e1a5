// Folders the plugin writes files into that LLDB later loads (side files, its debuginfod
// client cache), and where side files are kept between sessions. One in a shared place such as /tmp could have been made by another user,
// who could then put a debug file there for LLDB to load: such a folder is refused.
#pragma once

#include <filesystem>

namespace unwindkit::lldb_plugin {

// Creates `dir` (and its parents) if needed. True when it is a real folder (not a symbolic
// link) owned by this user that no one else may write to (write bits for others are taken
// away).
bool private_dir(const std::filesystem::path& dir);

// Where side files are kept between LLDB sessions: $UNWINDKIT_CACHE_DIR, else
// $XDG_CACHE_HOME/unwindkit/lldb, else ~/.cache/unwindkit/lldb, else <tmp>/unwindkit-lldb-<uid>.
std::filesystem::path side_file_cache_dir();

}  // namespace unwindkit::lldb_plugin
