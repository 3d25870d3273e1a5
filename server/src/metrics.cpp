// The /metrics counters (see metrics.h).
#include "metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace unwindkit::server {
namespace {

constexpr std::string_view kPrefix = "unwindkit_debuginfod_";

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {}{} {}\n# TYPE {}{} {}\n", kPrefix, name, help,
                 kPrefix, name, type);
}

}  // namespace

void Metrics::requested(unsigned status) {
  const auto* at = std::find(kStatuses.begin(), kStatuses.end() - 1, status);
  requests_[static_cast<size_t>(at - kStatuses.begin())].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::answered(std::string_view source, uint64_t bytes) {
  const std::string_view name = source.empty() ? kSources.back() : source;
  const auto* at = std::find(kSources.begin(), kSources.end(), name);
  if (at == kSources.end()) return;
  const auto i = static_cast<size_t>(at - kSources.begin());
  files_[i].fetch_add(1, std::memory_order_relaxed);
  bytes_[i].fetch_add(bytes, std::memory_order_relaxed);
}

void Metrics::fetched(const Fetch& fetch) {
  const auto result = static_cast<size_t>(fetch.result);
  if (result >= fetches_.size()) return;  // Kept: no fetch
  fetches_[result].fetch_add(1, std::memory_order_relaxed);
  if (!fetch.asked()) return;
  const auto* at = std::lower_bound(kFetchBuckets.begin(), kFetchBuckets.end(), fetch.seconds);
  fetch_buckets_[static_cast<size_t>(at - kFetchBuckets.begin())].fetch_add(1, std::memory_order_relaxed);
  fetch_microseconds_.fetch_add(static_cast<uint64_t>(fetch.seconds * 1e6), std::memory_order_relaxed);
}

std::string Metrics::text(uint64_t syntheses, size_t open_connections) const {
  std::string out;
  auto line = [&out](std::string_view name, std::string_view labels, uint64_t value) {
    fmt::format_to(std::back_inserter(out), "{}{}{} {}\n", kPrefix, name, labels, value);
  };
  header(out, "requests_total", "counter", "Requests answered, by HTTP status (other: any not listed).");
  for (size_t i = 0; i < kStatuses.size(); ++i)
    line("requests_total",
         kStatuses[i] ? fmt::format("{{status=\"{}\"}}", kStatuses[i]) : std::string("{status=\"other\"}"),
         requests_[i].load(std::memory_order_relaxed));
  header(out, "files_total", "counter",
         "Files answered 200, by where they came from (made, memory, disk: debug files; executable).");
  for (size_t i = 0; i < kSources.size(); ++i)
    line("files_total", fmt::format("{{source=\"{}\"}}", kSources[i]), files_[i].load(std::memory_order_relaxed));
  header(out, "sent_bytes_total", "counter", "Bytes of the files answered 200 (HEAD: none), by source.");
  for (size_t i = 0; i < kSources.size(); ++i)
    line("sent_bytes_total", fmt::format("{{source=\"{}\"}}", kSources[i]), bytes_[i].load(std::memory_order_relaxed));
  header(out, "syntheses_total", "counter", "Debug files synthesized by this process.");
  line("syntheses_total", "", syntheses);
  header(out, "connections", "gauge", "Connections open now.");
  line("connections", "", open_connections);
  header(out, "connections_accepted_total", "counter", "Connections accepted.");
  line("connections_accepted_total", "", accepted_.load(std::memory_order_relaxed));
  header(out, "upstream_fetches_total", "counter",
         "Build-ids not indexed, looked up upstream, by result (busy, hop_limit: upstream not asked).");
  for (size_t i = 0; i < kFetchResultNames.size(); ++i)
    line("upstream_fetches_total", fmt::format("{{result=\"{}\"}}", kFetchResultNames[i]),
         fetches_[i].load(std::memory_order_relaxed));
  header(out, "upstream_fetch_seconds", "histogram", "Time upstream took to answer a fetch.");
  uint64_t below = 0;
  for (size_t i = 0; i < fetch_buckets_.size(); ++i) {
    below += fetch_buckets_[i].load(std::memory_order_relaxed);
    line("upstream_fetch_seconds_bucket",
         i < kFetchBuckets.size() ? fmt::format("{{le=\"{}\"}}", kFetchBuckets[i]) : std::string("{le=\"+Inf\"}"),
         below);
  }
  fmt::format_to(std::back_inserter(out), "{}upstream_fetch_seconds_sum {:.6f}\n", kPrefix,
                 static_cast<double>(fetch_microseconds_.load(std::memory_order_relaxed)) / 1e6);
  line("upstream_fetch_seconds_count", "", below);
  return out;
}

}  // namespace unwindkit::server
