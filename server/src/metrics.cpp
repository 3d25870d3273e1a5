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
  return out;
}

}  // namespace unwindkit::server
