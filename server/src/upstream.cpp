// Federation (see upstream.h).
#include "unwindkit/server/upstream.h"

#include <elfutils/debuginfod.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "unwindkit/server/unique_fd.h"

namespace unwindkit::server {
namespace {

using AddressList = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;

AddressList resolve(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) found = nullptr;
  return {found, &::freeaddrinfo};
}

// The IPv4 address of an AF_INET address or of an IPv4-mapped IPv6 one (::ffff:a.b.c.d, which
// reaches a server bound to a.b.c.d).
std::optional<in_addr> ipv4_of(const sockaddr* a) {
  if (a->sa_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(a)->sin_addr;
  const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
  if (a->sa_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&v6)) return std::nullopt;
  in_addr v4{};
  std::memcpy(&v4, v6.s6_addr + 12, sizeof v4);
  return v4;
}

bool same_address(const sockaddr* a, const sockaddr* b) {
  const std::optional<in_addr> a4 = ipv4_of(a), b4 = ipv4_of(b);
  if (a4 || b4) return a4 && b4 && a4->s_addr == b4->s_addr;
  return a->sa_family == AF_INET6 && b->sa_family == AF_INET6 &&
         std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                     &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
}

// One of this machine's addresses: a socket can be bound to it (EADDRNOTAVAIL otherwise).
bool is_local(const addrinfo& address) {
  const UniqueFd fd(::socket(address.ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return false;
  sockaddr_storage any_port{};
  std::memcpy(&any_port, address.ai_addr, address.ai_addrlen);
  if (address.ai_family == AF_INET) reinterpret_cast<sockaddr_in*>(&any_port)->sin_port = 0;
  if (address.ai_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&any_port)->sin6_port = 0;
  return ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&any_port), address.ai_addrlen) == 0;
}

// Addresses in X-Forwarded-For (a comma-separated list): the hops a request has made.
unsigned hops_of(std::string_view forwarded_for) {
  if (forwarded_for.find_first_not_of(" ,") == std::string_view::npos) return 0;
  return static_cast<unsigned>(std::count(forwarded_for.begin(), forwarded_for.end(), ',')) + 1;
}

}  // namespace

bool names_this_server(std::string_view url, const std::string& bind, int port) {
  std::string_view rest = url;
  std::string default_port = "80";
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    default_port = "443";
  } else {
    return false;  // not a URL this server could answer
  }
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  std::string host, url_port = default_port;
  if (rest.starts_with('[')) {  // [IPv6]:port
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return false;
    host = rest.substr(1, close - 1);
    if (rest.size() > close + 2 && rest[close + 1] == ':') url_port = rest.substr(close + 2);
  } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    url_port = rest.substr(colon + 1);
  } else {
    host = rest;
  }
  if (url_port != std::to_string(port)) return false;
  const AddressList targets = resolve(host, url_port);
  const AddressList bound = resolve(bind, url_port);
  for (const addrinfo* t = targets.get(); t != nullptr; t = t->ai_next) {
    for (const addrinfo* b = bound.get(); b != nullptr; b = b->ai_next) {
      const bool wildcard = (b->ai_family == AF_INET &&
                             reinterpret_cast<const sockaddr_in*>(b->ai_addr)->sin_addr.s_addr == INADDR_ANY) ||
                            (b->ai_family == AF_INET6 &&
                             IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(b->ai_addr)->sin6_addr));
      if (same_address(t->ai_addr, b->ai_addr) || (wildcard && is_local(*t))) return true;
    }
  }
  return false;
}

Upstream::Upstream(const std::vector<std::string>& urls, const std::filesystem::path& dir,
                   const IndexOptions& options, Limits limits)
    : limits_(limits), fetched_(options) {
  std::string joined;
  for (const std::string& url : urls) joined += (joined.empty() ? "" : " ") + url;
  ::setenv("DEBUGINFOD_URLS", joined.c_str(), 1);
  ::setenv("DEBUGINFOD_CACHE_PATH", dir.c_str(), 1);
  ::setenv("DEBUGINFOD_MAXSIZE", std::to_string(limits.max_file_size).c_str(), 1);
  ::setenv("DEBUGINFOD_MAXTIME", std::to_string(kUpstreamSeconds).c_str(), 1);
  ::setenv("DEBUGINFOD_TIMEOUT", std::to_string(kUpstreamStallSeconds).c_str(), 1);
  ::setenv("DEBUGINFOD_RETRY_LIMIT", std::to_string(kUpstreamRetries).c_str(), 1);
  ::unsetenv("DEBUGINFOD_PROGRESS");
  ::unsetenv("DEBUGINFOD_VERBOSE");
}

Fetch Upstream::fetch(std::string_view build_id, const std::string& forwarded_for) {
  const std::string id(build_id);
  {
    std::lock_guard lock(mutex_);
    if (const IndexedModule* known = fetched_.find(id); known != nullptr && unchanged(*known))
      return {FetchResult::Kept, *known, "", 0};
  }
  // The request's own hops: the address just appended is this server's client, not a hop.
  if (const unsigned hops = std::max(hops_of(forwarded_for), 1u) - 1; hops >= limits_.forwarded_hops)
    return {FetchResult::HopLimit, std::nullopt,
            fmt::format("unknown build-id (X-Forwarded-For has {} hops, the limit {}: upstream not asked)",
                        hops, limits_.forwarded_hops),
            0};
  // A fetch holds a worker until upstream answers: past the bound, the others stay free for
  // what is indexed.
  if (in_flight_.fetch_add(1) >= limits_.max_fetches) {
    in_flight_.fetch_sub(1);
    return {FetchResult::Busy, std::nullopt,
            fmt::format("{} upstream fetches already under way", limits_.max_fetches), 0};
  }
  Fetch fetch = ask(id, forwarded_for);
  in_flight_.fetch_sub(1);
  return fetch;
}

Fetch Upstream::ask(const std::string& id, const std::string& forwarded_for) {
  const auto start = std::chrono::steady_clock::now();
  auto took = [&start] {
    // Never 0: a fetch asked is told from one not asked by its time.
    return std::max(1e-9, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  // A client per fetch: libdebuginfod's are not shared between threads.
  const std::unique_ptr<debuginfod_client, decltype(&debuginfod_end)> client(debuginfod_begin(),
                                                                             &debuginfod_end);
  if (!client) return {FetchResult::Failed, std::nullopt, "upstream: no client", took()};
  // As elfutils' debuginfod passes a miss on: the chain of clients, so that a loop ends.
  debuginfod_add_http_header(client.get(), ("X-Forwarded-For: " + forwarded_for).c_str());
  char* raw_path = nullptr;
  const int fd = debuginfod_find_executable(client.get(), reinterpret_cast<const unsigned char*>(id.c_str()),
                                            0, &raw_path);
  const std::unique_ptr<char, decltype(&std::free)> path(raw_path, &std::free);
  if (fd < 0)
    return {fd == -ENOENT ? FetchResult::NotFound : FetchResult::Failed, std::nullopt,
            fmt::format("unknown build-id (upstream: {})", std::strerror(-fd)), took()};
  const UniqueFd owned(fd);
  std::vector<std::string> notes;
  std::lock_guard lock(mutex_);
  fetched_.add_file(path.get(), notes);
  if (const IndexedModule* module = fetched_.find(id)) return {FetchResult::Found, *module, "", took()};
  return {FetchResult::WrongFile, std::nullopt, "upstream sent a file without that build-id", took()};
}

}  // namespace unwindkit::server
