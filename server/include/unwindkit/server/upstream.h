// Federation (`unwindkit debuginfod --upstream URL...`): a build-id the server did not index is
// fetched from the fleet's servers (`/buildid/ID/executable`) by elfutils' own client
// (libdebuginfod), bounded in size and time; the file fetched is indexed as a given file is, so
// it is served only when its build-id is the one asked for, and synthesized and cached as any.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/server/module_index.h"

namespace unwindkit::server {

// How long one fetch may take in all, and without progress (libdebuginfod's
// DEBUGINFOD_MAXTIME and DEBUGINFOD_TIMEOUT): a slow upstream holds one worker this long at most.
inline constexpr unsigned kUpstreamSeconds = 30;
inline constexpr unsigned kUpstreamStallSeconds = 10;

class Upstream {
 public:
  // `urls`: the upstream servers, tried in order; `dir`: where fetched files are kept (its
  // own folder); files over `options.max_file_size` are not fetched. Sets libdebuginfod's
  // environment: made once, before the server's threads start.
  Upstream(const std::vector<std::string>& urls, const std::filesystem::path& dir,
           const IndexOptions& options);

  // The module of `build_id` from upstream, fetched now if not fetched before; nullopt when
  // no upstream has it, or what came is not that build-id (`why` says which).
  std::optional<IndexedModule> fetch(std::string_view build_id, std::string& why);

 private:
  std::mutex mutex_;
  ModuleIndex fetched_;
};

}  // namespace unwindkit::server
