// `unwindkit debuginfod`'s server, in a library of its own (libunwindkit-debuginfod.so) that the
// CLI loads for that command alone: libmicrohttpd, with the GnuTLS libraries it links, would
// take a share of every other command's start-up. debuginfod_cmd.cpp parses the command line
// into DebuginfodArgs and calls the library's one export.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/server/debug_file_cache.h"
#include "unwindkit/server/debuginfod_server.h"

namespace unwindkit::cli {

struct DebuginfodArgs {
  server::ServerOptions server;
  std::string cache_dir;
  std::string names = "auto";
  uint64_t max_file_mib = 512;
  uint64_t memory_mib = server::kDefaultMemoryBudget >> 20;
  std::optional<uint64_t> cache_max_mib;
  std::vector<std::string> upstream;  // servers asked for what is not indexed (upstream.h)
  unsigned forwarded_hops = server::kDefaultForwardedHops;  // --forwarded-ttl-limit
  unsigned rescan_seconds = 0;  // -t: the paths scanned again this often (0: at start only)
  std::vector<std::string> paths;
};

// The library's file name, and its path from the installed `unwindkit`'s folder
// (UNWINDKIT_INSTALLED_DEBUGINFOD, set by cli/CMakeLists.txt); in the build tree it lies next
// to the binary.
inline constexpr const char* kDebuginfodLibrary = "libunwindkit-debuginfod.so";
inline constexpr const char* kDebuginfodEntry = "unwindkit_debuginfod_serve";

}  // namespace unwindkit::cli

// Indexes the paths and serves until stopped; returns the command's exit code.
extern "C" int unwindkit_debuginfod_serve(const unwindkit::cli::DebuginfodArgs& args);
