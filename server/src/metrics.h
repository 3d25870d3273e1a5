// The server's counters, served at /metrics in Prometheus' text format (as elfutils'
// debuginfod serves its own): requests by status, debug files by where they came from and
// bytes sent, syntheses, connections.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace unwindkit::server {

class Metrics {
 public:
  void requested(unsigned status);
  // A file answered: `source` "made", "memory", "disk", or "" for an indexed executable.
  void answered(std::string_view source, uint64_t bytes);
  void accepted() { accepted_.fetch_add(1, std::memory_order_relaxed); }
  // The exposition, with the cache's synthesis count and the connections open now.
  std::string text(uint64_t syntheses, size_t open_connections) const;

 private:
  // The statuses the server answers with, and one slot for any other.
  static constexpr std::array<unsigned, 8> kStatuses = {200, 400, 404, 405, 413, 431, 500, 0};
  std::array<std::atomic<uint64_t>, kStatuses.size()> requests_{};
  // By source: made, memory, disk, executable.
  static constexpr std::array<std::string_view, 4> kSources = {"made", "memory", "disk", "executable"};
  std::array<std::atomic<uint64_t>, kSources.size()> files_{}, bytes_{};
  std::atomic<uint64_t> accepted_{0};
};

}  // namespace unwindkit::server
