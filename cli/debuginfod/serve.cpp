// The debuginfod server's run (see serve.h): index the paths, bind, serve until SIGINT/SIGTERM.
#include "serve.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "../commands.h"

namespace {

std::atomic<unwindkit::server::DebuginfodServer*> running{nullptr};

extern "C" void stop_serving(int) {
  if (auto* server = running.load()) server->stop();
}

// Why `dir` cannot be the cache folder, or "" when it can: a file there, or a folder this user
// cannot write, would leave the server caching nothing and saying nothing.
std::string unusable_cache(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir, ec))
    return ec ? ec.message() : std::string("not a folder");
  // Written to, not asked about: root passes access(2) on a folder it still cannot write
  // (a read-only mount, /proc).
  std::string probe = (dir / ".unwindkit-probe.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return fmt::format("cannot write there: {}", std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

// Every connection is a descriptor, and so is every file being sent: the soft limit (often
// 1,024) would refuse connections the server means to hold.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

extern "C" int unwindkit_debuginfod_serve(const unwindkit::cli::DebuginfodArgs& args) {
  using namespace unwindkit;
  namespace fs = std::filesystem;
  // A client hanging up mid-answer must not end the server.
  std::signal(SIGPIPE, SIG_IGN);
  raise_descriptor_limit();
  // Without --cache, files are kept in a private folder for this run, removed at exit: a
  // file being sent is read from disk, so that clients that do not read hold no memory.
  fs::path cache_dir = args.cache_dir;
  const bool private_cache = cache_dir.empty();
  if (private_cache) {
    std::string pattern = (fs::temp_directory_path() / "unwindkit-debuginfod.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      fmt::print(stderr, "unwindkit: cannot make a cache folder {}: {}\n", pattern, std::strerror(errno));
      return cli::kExitDataProblem;
    }
    cache_dir = pattern;
  } else if (const std::string why = unusable_cache(cache_dir); !why.empty()) {
    fmt::print(stderr, "unwindkit: --cache {}: {}\n", cache_dir.string(), why);
    return cli::kExitUsage;
  }

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
  server::CacheLimits limits;
  limits.memory = args.memory_mib << 20;
  if (args.cache_max_mib) limits.disk = *args.cache_max_mib << 20;
  int exit_code = cli::kExitOk;
  {
    server::DebugFileCache cache(cache_dir, {}, limits);
    server::DebuginfodServer http(index, cache, options);
    auto port = http.bind();
    if (!port) {
      // "http://127.0.0.1:8002: cannot bind port 8002: Address already in use"
      fmt::print(stderr, "unwindkit: {}: {}\n", port.error().field, port.error().message);
      exit_code = cli::kExitUsage;
    } else {
      fmt::print("listening on {}\n", server::url_of(options.bind, *port));
      std::fflush(stdout);
      running = &http;
      std::signal(SIGINT, stop_serving);
      std::signal(SIGTERM, stop_serving);
      if (!http.run()) exit_code = cli::kExitDataProblem;
      running = nullptr;
    }
  }
  if (private_cache) {
    std::error_code ec;
    fs::remove_all(cache_dir, ec);
  }
  return exit_code;
}
