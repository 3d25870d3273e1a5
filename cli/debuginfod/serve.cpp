// The debuginfod server's run (see serve.h): index the paths, bind, serve.
#include "serve.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "../commands.h"

extern "C" int unwindkit_debuginfod_serve(const unwindkit::cli::DebuginfodArgs& args) {
  using namespace unwindkit;
  // A client hanging up mid-answer must not end the server.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> notes;
  server::IndexOptions index_options;
  index_options.max_file_size = args.max_file_mib << 20;
  const server::ModuleIndex index = server::ModuleIndex::scan(args.paths, index_options, notes);
  for (const std::string& note : notes) fmt::print(stderr, "unwindkit: {}\n", note);
  fmt::print(stderr, "unwindkit: indexed {} modules\n", index.size());

  server::ServerOptions options = args.server;
  if (args.names != "auto")
    options.names =
        args.names == "lldb" ? debuginfo::FallbackNames::Lldb : debuginfo::FallbackNames::None;
  std::optional<std::filesystem::path> cache_dir;
  if (!args.cache_dir.empty()) cache_dir = args.cache_dir;
  server::CacheLimits limits;
  limits.memory = args.memory_mib << 20;
  if (args.cache_max_mib) limits.disk = *args.cache_max_mib << 20;
  server::DebugFileCache cache(cache_dir, {}, limits);
  server::DebuginfodServer http(index, cache, options);
  auto port = http.bind();
  if (!port) {
    fmt::print(stderr, "unwindkit: {}\n", port.error().to_string());
    return cli::kExitUsage;
  }
  fmt::print("listening on http://{}:{}\n", options.bind, *port);
  std::fflush(stdout);
  return http.run() ? cli::kExitOk : cli::kExitDataProblem;
}
