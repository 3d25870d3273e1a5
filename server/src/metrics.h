// The server's counters, served at /metrics in Prometheus' text format (as elfutils'
// debuginfod serves its own): requests by status, debug files by where they came from and
// bytes sent, syntheses, connections, upstream fetches by result and their latency.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "unwindkit/server/upstream.h"

namespace unwindkit::server {

class Metrics {
 public:
  void requested(unsigned status);
  // A file answered: `source` "made", "memory", "disk", or "" for an indexed executable.
  void answered(std::string_view source, uint64_t bytes);
  void accepted() { accepted_.fetch_add(1, std::memory_order_relaxed); }
  // A look-up upstream: counted by result, and its time in the histogram when upstream was asked.
  void fetched(const Fetch& fetch);
  // The exposition, with the cache's synthesis count and the connections open now.
  std::string text(uint64_t syntheses, size_t open_connections) const;

 private:
  // The statuses the server answers with, and one slot for any other.
  static constexpr std::array<unsigned, 9> kStatuses = {200, 400, 404, 405, 413, 431, 500, 503, 0};
  std::array<std::atomic<uint64_t>, kStatuses.size()> requests_{};
  // By source: made, memory, disk, executable.
  static constexpr std::array<std::string_view, 4> kSources = {"made", "memory", "disk", "executable"};
  std::array<std::atomic<uint64_t>, kSources.size()> files_{}, bytes_{};
  std::atomic<uint64_t> accepted_{0};
  std::array<std::atomic<uint64_t>, kFetchResultNames.size()> fetches_{};
  // Upper bounds (seconds) of the fetch-time histogram's buckets, up to kUpstreamSeconds, the
  // most a fetch may take; +Inf is the count. A fetch counts in its own bucket only (the text
  // adds them up, as the format's buckets are cumulative).
  static constexpr std::array<double, 12> kFetchBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                          0.5,   1,    2.5,   5,    10,  kUpstreamSeconds};
  std::array<std::atomic<uint64_t>, kFetchBuckets.size() + 1> fetch_buckets_{};
  std::atomic<uint64_t> fetch_microseconds_{0};
};

}  // namespace unwindkit::server
