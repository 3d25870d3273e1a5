// The debuginfod server's run (see serve.h): index the paths, bind, serve until SIGINT/SIGTERM.
#include "serve.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "../commands.h"
#include "unwindkit/server/upstream.h"

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

// The index the server answers from, made again every -t seconds (elfutils' debuginfod's
// rescan): a new build is served from the next rescan on, a removed or changed one no longer
// as it was. Requests see one whole index or the next, never one being made.
class Index {
 public:
  std::optional<unwindkit::server::IndexedModule> find(std::string_view id) const {
    std::shared_ptr<const unwindkit::server::ModuleIndex> now;
    {
      std::lock_guard lock(mutex_);
      now = current_;
    }
    if (const unwindkit::server::IndexedModule* module = now ? now->find(id) : nullptr) return *module;
    return std::nullopt;
  }

  // Scans the paths (from the last index: files unchanged since are not read again); a note
  // is printed the first time it is seen, the count whenever it changes.
  void rescan(const std::vector<std::string>& paths, const unwindkit::server::IndexOptions& options) {
    std::vector<std::string> notes;
    auto next = std::make_shared<const unwindkit::server::ModuleIndex>(
        unwindkit::server::ModuleIndex::scan(paths, options, notes, current_.get()));
    for (const std::string& note : notes)
      if (seen_.insert(note).second) fmt::print(stderr, "unwindkit: {}\n", note);
    if (!current_ || next->size() != current_->size())
      fmt::print(stderr, "unwindkit: indexed {} modules\n", next->size());
    std::lock_guard lock(mutex_);
    current_ = std::move(next);
  }

  void rescan_every(unsigned seconds, const std::vector<std::string>& paths,
                    const unwindkit::server::IndexOptions& options) {
    std::unique_lock lock(stop_mutex_);
    while (!stopped_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopping_; })) {
      lock.unlock();
      rescan(paths, options);
      lock.lock();
    }
  }

  void stop() {
    {
      std::lock_guard lock(stop_mutex_);
      stopping_ = true;
    }
    stopped_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const unwindkit::server::ModuleIndex> current_;  // written by rescan() alone
  std::set<std::string> seen_;
  std::mutex stop_mutex_;
  std::condition_variable stopped_;
  bool stopping_ = false;
};

// The upstream servers: --upstream, or else DEBUGINFOD_URLS (as elfutils' debuginfod takes
// them), less any that names this server itself, which would ask itself for every miss. With
// --port 0 the port is not known yet; X-Forwarded-For's hop limit ends such a loop then.
std::vector<std::string> upstream_urls(const unwindkit::cli::DebuginfodArgs& args) {
  std::vector<std::string> given = args.upstream;
  const char* from_env = std::getenv("DEBUGINFOD_URLS");
  const bool env = given.empty() && from_env != nullptr;
  if (env) {
    std::istringstream words(from_env);
    for (std::string url; words >> url;) given.push_back(url);
  }
  std::vector<std::string> urls;
  for (const std::string& url : given) {
    if (args.server.port != 0 && unwindkit::server::names_this_server(url, args.server.bind, args.server.port))
      fmt::print(stderr, "unwindkit: upstream {}{} is this server: left out\n", url,
                 env ? " (DEBUGINFOD_URLS)" : "");
    else
      urls.push_back(url);
  }
  if (!urls.empty())
    fmt::print(stderr, "unwindkit: upstream {}{}\n", fmt::join(urls, " "), env ? " (DEBUGINFOD_URLS)" : "");
  return urls;
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

  server::IndexOptions index_options;
  index_options.max_file_size = args.max_file_mib << 20;
  Index index;
  index.rescan(args.paths, index_options);

  server::ServerOptions options = args.server;
  if (const std::vector<std::string> urls = upstream_urls(args); !urls.empty()) {
    server::Upstream::Limits limits;
    limits.max_file_size = index_options.max_file_size;
    // Half the workers at most wait on upstream: the others answer what is indexed.
    limits.max_fetches = std::max<size_t>(1, options.threads / 2);
    limits.forwarded_hops = args.forwarded_hops;
    options.upstream = std::make_shared<server::Upstream>(urls, cache_dir / "upstream", index_options, limits);
  }
  if (args.names != "auto")
    options.names =
        args.names == "lldb" ? debuginfo::FallbackNames::Lldb : debuginfo::FallbackNames::None;
  server::CacheLimits limits;
  limits.memory = args.memory_mib << 20;
  if (args.cache_max_mib) limits.disk = *args.cache_max_mib << 20;
  int exit_code = cli::kExitOk;
  {
    server::DebugFileCache cache(cache_dir, {}, limits);
    server::DebuginfodServer http([&index](std::string_view id) { return index.find(id); }, cache,
                                  options);
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
      std::thread rescans;
      if (args.rescan_seconds)
        rescans = std::thread([&] { index.rescan_every(args.rescan_seconds, args.paths, index_options); });
      if (!http.run()) exit_code = cli::kExitDataProblem;
      running = nullptr;
      index.stop();
      if (rescans.joinable()) rescans.join();
    }
  }
  if (private_cache) {
    std::error_code ec;
    fs::remove_all(cache_dir, ec);
  }
  return exit_code;
}
