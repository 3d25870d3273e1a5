// The listening socket (see listen_socket.h).
#include "listen_socket.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace unwindkit::server {
namespace {

// Connections waiting to be accepted: a burst of clients overflowing a short queue costs each
// dropped SYN a 1 s retry.
constexpr int kListenBacklog = 1024;

std::string unbracketed(const std::string& address) {
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']')
    return address.substr(1, address.size() - 2);
  return address;
}

Result<ListenSocket> listening(UniqueFd fd, const std::string& where) {
  if (::listen(fd.get(), kListenBacklog) != 0)
    return fail(ErrorKind::Io, "debuginfod", 0, where, fmt::format("cannot listen: {}", std::strerror(errno)));
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0)
    return fail(ErrorKind::Io, "debuginfod", 0, where, std::strerror(errno));
  ListenSocket out;
  out.ipv6 = bound.ss_family == AF_INET6;
  out.port = ntohs(out.ipv6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                            : reinterpret_cast<const sockaddr_in&>(bound).sin_port);
  out.fd = std::move(fd);
  return out;
}

}  // namespace

Result<ListenSocket> listen_on(const std::string& address, int port) {
  const std::string host = unbracketed(address);
  const std::string where = url_of(address, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return fail(ErrorKind::Io, "debuginfod", 0, where, fmt::format("cannot bind: {}", ::gai_strerror(rc)));
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  UniqueFd fd(::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol));
  if (!fd) return fail(ErrorKind::Io, "debuginfod", 0, where, std::strerror(errno));
  // SO_REUSEADDR: a restarted server takes its port back while the last one's connections
  // linger in TIME_WAIT. On Linux it lets no second socket listen on the port.
  const int yes = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (found->ai_family == AF_INET6) ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes);
  if (::bind(fd.get(), found->ai_addr, found->ai_addrlen) != 0)
    return fail(ErrorKind::Io, "debuginfod", 0, where,
                fmt::format("cannot bind port {}: {}", port, std::strerror(errno)));
  return listening(std::move(fd), where);
}

Result<ListenSocket> listen_on_bound(int fd) { return listening(UniqueFd(fd), "reserved socket"); }

std::string url_of(const std::string& address, int port) {
  const std::string host = unbracketed(address);
  const bool v6 = host.find(':') != std::string::npos;
  return v6 ? fmt::format("http://[{}]:{}", host, port) : fmt::format("http://{}:{}", host, port);
}

}  // namespace unwindkit::server
