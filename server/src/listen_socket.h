// The server's listening socket, made here rather than by the HTTP stack: a port in use is an
// error naming the address, the port and the reason (no SO_REUSEPORT, which would let a second
// server share the port and the kernel split requests between the two).
#pragma once

#include <string>

#include "unwindkit/error.h"
#include "unwindkit/server/debuginfod_server.h"
#include "unwindkit/server/unique_fd.h"

namespace unwindkit::server {

struct ListenSocket {
  UniqueFd fd;
  int port = 0;       // as bound (--port 0: the one the kernel picked)
  bool ipv6 = false;
};

// Binds `address` (numeric IPv4 or IPv6, with or without brackets, or a host name) at `port`
// (0: any free port) and listens.
Result<ListenSocket> listen_on(const std::string& address, int port);
// Listens on a socket bound already (the LLDB plugin reserves its port before it serves).
Result<ListenSocket> listen_on_bound(int fd);

}  // namespace unwindkit::server
