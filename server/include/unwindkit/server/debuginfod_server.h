// The debuginfod HTTP front: GET /buildid/<id>/debuginfo (a synthesized debug file) and
// /buildid/<id>/executable (the indexed file itself), one log line per request on stderr.
// cpp-httplib does the HTTP; this file only routes and bounds.
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

namespace unwindkit::server {

struct ServerOptions {
  // How functions known only from SFrame are named; nullopt: as the client's debugger names
  // them (GDB, whose libdebuginfod sends `User-Agent: elfutils/...`: no name, GDB prints
  // `?? ()`; any other client, such as LLDB, which sends none: `___lldb_unnamed_symbol_ADDR`).
  std::optional<debuginfo::FallbackNames> names;
  std::string bind = "127.0.0.1";
  int port = 8002;      // 0: any free port
  size_t threads = 16;  // requests served at once
  bool log_requests = true;  // one line per request on stderr (not inside a debugger)
  // A refusal's reason also as its body (text/plain, which cpp-httplib compresses with brotli
  // for every client that accepts it: 0.3 ms a refusal). The log line has it either way.
  bool refusal_bodies = true;
  // `/buildid/ID/executable`: the indexed module's own file, for a client that lacks it (a
  // fleet's). false: refused, for a server inside the debugger that has every module it asks
  // about open already (LLDB asks for it when a module's debug file is refused, and would
  // read the whole module again over the socket: 2 s for a 100 MB one).
  bool executables = true;
};

// The indexed module with this build-id (lowercase hex), if any. Called from the server's
// threads at once: an index that grows while serving locks inside.
using ModuleFinder = std::function<std::optional<IndexedModule>(std::string_view build_id)>;

class DebuginfodServer {
 public:
  DebuginfodServer(const ModuleIndex& index, DebugFileCache& cache, ServerOptions options);
  DebuginfodServer(ModuleFinder find, DebugFileCache& cache, ServerOptions options);
  ~DebuginfodServer();

  // Binds the socket; returns the port bound.
  Result<int> bind();
  // Serves until stop(); false if it could not.
  bool run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace unwindkit::server
