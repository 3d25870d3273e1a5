// Federation (see upstream.h).
#include "unwindkit/server/upstream.h"

#include <elfutils/debuginfod.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "unwindkit/server/unique_fd.h"

namespace unwindkit::server {

Upstream::Upstream(const std::vector<std::string>& urls, const std::filesystem::path& dir,
                   const IndexOptions& options)
    : fetched_(options) {
  std::string joined;
  for (const std::string& url : urls) joined += (joined.empty() ? "" : " ") + url;
  ::setenv("DEBUGINFOD_URLS", joined.c_str(), 1);
  ::setenv("DEBUGINFOD_CACHE_PATH", dir.c_str(), 1);
  ::setenv("DEBUGINFOD_MAXSIZE", std::to_string(options.max_file_size).c_str(), 1);
  ::setenv("DEBUGINFOD_MAXTIME", std::to_string(kUpstreamSeconds).c_str(), 1);
  ::setenv("DEBUGINFOD_TIMEOUT", std::to_string(kUpstreamStallSeconds).c_str(), 1);
  ::unsetenv("DEBUGINFOD_PROGRESS");
  ::unsetenv("DEBUGINFOD_VERBOSE");
}

std::optional<IndexedModule> Upstream::fetch(std::string_view build_id, std::string& why) {
  const std::string id(build_id);
  {
    std::lock_guard lock(mutex_);
    if (const IndexedModule* known = fetched_.find(id); known != nullptr && unchanged(*known))
      return *known;
  }
  // A client per fetch: libdebuginfod's are not shared between threads.
  const std::unique_ptr<debuginfod_client, decltype(&debuginfod_end)> client(debuginfod_begin(),
                                                                             &debuginfod_end);
  if (!client) {
    why = "upstream: no client";
    return std::nullopt;
  }
  char* raw_path = nullptr;
  const int fd = debuginfod_find_executable(client.get(), reinterpret_cast<const unsigned char*>(id.c_str()),
                                            0, &raw_path);
  const std::unique_ptr<char, decltype(&std::free)> path(raw_path, &std::free);
  if (fd < 0) {
    why = fmt::format("unknown build-id (upstream: {})", std::strerror(-fd));
    return std::nullopt;
  }
  const UniqueFd owned(fd);
  std::vector<std::string> notes;
  std::lock_guard lock(mutex_);
  fetched_.add_file(path.get(), notes);
  if (const IndexedModule* module = fetched_.find(id)) return *module;
  why = "upstream sent a file without that build-id";
  return std::nullopt;
}

}  // namespace unwindkit::server
