// The debuginfod HTTP front: GET /buildid/<id>/debuginfo (a synthesized debug file) and
// /buildid/<id>/executable (the indexed file itself), one log line per request on stderr.
// libmicrohttpd does the HTTP (connection_model.h says how clients are bounded); this file
// routes, answers and bounds.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "unwindkit/error.h"
#include "unwindkit/server/debug_file_cache.h"
#include "unwindkit/server/module_index.h"
#include "unwindkit/server/upstream.h"

namespace unwindkit::server {

struct ServerOptions {
  // How functions known only from SFrame are named; nullopt: as the client's debugger names
  // them (GDB, whose libdebuginfod sends `User-Agent: elfutils/...`: no name, GDB prints
  // `?? ()`; any other client, such as LLDB, which sends none: `___lldb_unnamed_symbol_ADDR`).
  std::optional<debuginfo::FallbackNames> names;
  std::string bind = "127.0.0.1";
  int port = 8002;      // 0: any free port
  // A socket bound already, listened on instead of binding `bind`:`port` (the LLDB plugin's
  // reserved port); the server owns it from then on. -1: none.
  int listen_fd = -1;
  size_t threads = 16;  // answers made at once (off the event loop: connections wait for none)
  // Connections open at once, in all and from one client address; one past either is closed
  // as it is accepted. Each costs at most kConnectionMemory of this process's memory.
  size_t max_connections = 1024;
  size_t max_connections_per_client = 256;
  bool log_requests = true;  // one line per request on stderr (not inside a debugger)
  // A refusal's reason also as its body (text/plain). The log line has it either way.
  bool refusal_bodies = true;
  // `/buildid/ID/executable`: the indexed module's own file, for a client that lacks it (a
  // fleet's). false: refused, for a server inside the debugger that has every module it asks
  // about open already (LLDB asks for it when a module's debug file is refused, and would
  // read the whole module again over the socket: 2 s for a 100 MB one).
  bool executables = true;
  // Asked for a build-id not indexed (federation); null: none (a miss is 404).
  std::shared_ptr<Upstream> upstream;
};

// The indexed module with this build-id (lowercase hex), if any. Called from the server's
// threads at once: an index that grows while serving locks inside.
using ModuleFinder = std::function<std::optional<IndexedModule>(std::string_view build_id)>;

// http://ADDRESS:PORT, an IPv6 address in brackets (http://[::1]:8002).
std::string url_of(const std::string& address, int port);

class DebuginfodServer {
 public:
  DebuginfodServer(ModuleFinder find, DebugFileCache& cache, ServerOptions options);
  ~DebuginfodServer();

  // Binds the socket (or listens on options.listen_fd) and starts serving on threads of its
  // own; returns the port bound.
  Result<int> bind();
  // Waits until stop(); false if the server never started.
  bool run();
  // Ends run(): safe to call from a signal handler (one write to a pipe). The connections
  // close when the server is destroyed.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace unwindkit::server
