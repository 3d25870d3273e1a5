// Federation (`unwindkit debuginfod --upstream URL...`, or DEBUGINFOD_URLS as elfutils'
// debuginfod reads it): a build-id the server did not index is fetched from the fleet's servers
// (`/buildid/ID/executable`) by elfutils' own client (libdebuginfod), bounded in size and time;
// the file fetched is indexed as a given file is, so it is served only when its build-id is the
// one asked for, and synthesized and cached as any.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
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
// Both bound one try, and libdebuginfod tries again twice by default (DEBUGINFOD_RETRY_LIMIT):
// a silent upstream held a worker 31 s, not 10. One try: the URLs are asked at once anyway, so
// a retry is no failover.
inline constexpr unsigned kUpstreamSeconds = 30;
inline constexpr unsigned kUpstreamStallSeconds = 10;
inline constexpr unsigned kUpstreamRetries = 0;
// X-Forwarded-For hops past which a miss is not passed on (elfutils' --forwarded-ttl-limit and
// its default): a loop of servers that are each other's upstream ends there.
inline constexpr unsigned kDefaultForwardedHops = 8;

// What one request's look-up upstream came to. Kept: fetched by an earlier request (no fetch).
enum class FetchResult { Found, NotFound, WrongFile, Failed, Busy, HopLimit, Kept };
// Their names in /metrics (`result` label), in the enum's order; Kept is no fetch and has none.
inline constexpr std::array<std::string_view, 6> kFetchResultNames = {
    "found", "not_found", "wrong_file", "error", "busy", "hop_limit"};

struct Fetch {
  FetchResult result = FetchResult::NotFound;
  std::optional<IndexedModule> module;  // Found and Kept only
  std::string why;                      // the others: the refusal's reason
  double seconds = 0;                   // how long libdebuginfod took (0 if not asked)
  bool asked() const { return seconds > 0; }
};

// True when `url` names this server itself (bound to `bind`:`port`): its host is one of this
// machine's addresses (the bind address itself, or any when bound to all of them) and its port
// `port`. Such an upstream would ask itself for every miss.
bool names_this_server(std::string_view url, const std::string& bind, int port);

class Upstream {
 public:
  struct Limits {
    uint64_t max_file_size = 0;       // larger files are not fetched
    size_t max_fetches = 1;           // fetches at once; one more is answered Busy
    unsigned forwarded_hops = kDefaultForwardedHops;
  };

  // `urls`: the upstream servers, tried in order; `dir`: where fetched files are kept (its
  // own folder). Sets libdebuginfod's environment: made once, before the server's threads start.
  Upstream(const std::vector<std::string>& urls, const std::filesystem::path& dir,
           const IndexOptions& options, Limits limits);

  // The module of `build_id` from upstream, fetched now unless fetched before. `forwarded_for`:
  // the request's X-Forwarded-For with its client's address appended (what is sent upstream;
  // its hops are counted against the limit first).
  Fetch fetch(std::string_view build_id, const std::string& forwarded_for);

 private:
  Fetch ask(const std::string& id, const std::string& forwarded_for);

  Limits limits_;
  std::atomic<size_t> in_flight_{0};
  std::mutex mutex_;
  ModuleIndex fetched_;
};

}  // namespace unwindkit::server
