// The debuginfod HTTP front (see debuginfod_server.h).
#include "unwindkit/server/debuginfod_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <sys/socket.h>

#include <algorithm>
#include <string_view>

namespace unwindkit::server {
namespace {

constexpr size_t kMaxRequestBody = 1024;  // a debuginfod request is a GET: no body
constexpr time_t kReadTimeoutSeconds = 5, kWriteTimeoutSeconds = 60;
constexpr size_t kKeepAliveRequests = 100;
// Connections waiting to be accepted. Debian's compiled cpp-httplib listens with a backlog of
// 5: a burst of clients overflows it and each dropped SYN costs its client a 1 s retry.
constexpr int kListenBacklog = 1024;
constexpr const char* kCacheHeader = "X-Unwindkit-Cache";
// The body may be compressed by the time the logger sees it: the reason travels as a header.
constexpr const char* kReasonHeader = "X-Unwindkit-Reason";
constexpr const char* kElfType = "application/octet-stream";
// libdebuginfod's User-Agent starts so: the client is GDB (or another elfutils tool).
constexpr std::string_view kElfutilsAgent = "elfutils/";

}  // namespace

struct DebuginfodServer::Impl {
  Impl(ModuleFinder f, DebugFileCache& c, ServerOptions o)
      : find(std::move(f)), cache(c), options(std::move(o)) {}

  ModuleFinder find;
  DebugFileCache& cache;
  ServerOptions options;
  httplib::Server http;
  int listen_socket = -1;

  // The reason for a non-200 answer: in a header for the log line and, unless the options say
  // otherwise, in the body for the client. It never names a path on this machine (the
  // request's build-id says which module it is).
  void refuse(httplib::Response& res, int status, std::string reason) const {
    std::replace_if(reason.begin(), reason.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
    res.status = status;
    res.set_header(kReasonHeader, reason);
    if (options.refusal_bodies) res.set_content(std::move(reason), "text/plain");
  }

  // Linux lets listen() be called again on a listening socket to change its backlog.
  void widen_backlog() const {
    if (listen_socket >= 0) ::listen(listen_socket, kListenBacklog);
  }

  void buildid(const httplib::Request& req, httplib::Response& res) {
    const std::string id = normalize_build_id(req.matches[1].str());
    const std::string kind = req.matches[2].str();
    if (id.empty()) return refuse(res, 400, "not a build-id");
    if (kind != "debuginfo" && (kind != "executable" || !options.executables))
      return refuse(res, 404, "not served: " + kind);
    const std::optional<IndexedModule> module = find(id);
    if (!module) return refuse(res, 404, "unknown build-id");
    if (!unchanged(*module)) return refuse(res, 404, "the file changed since it was indexed");
    if (kind == "executable") {
      std::string bytes;
      if (!read_indexed_file(*module, bytes)) return refuse(res, 404, "the file is unreadable");
      res.set_content(std::move(bytes), kElfType);
      return;
    }
    CacheSource source = CacheSource::Made;
    CachedFile file = cache.get(*module, source, names_for(req));
    res.set_header(kCacheHeader, std::string(cache_source_name(source)));
    if (!file.bytes) return refuse(res, 404, file.note);
    // Sent from the cached bytes, not copied into the response first: a side file of a large
    // module is 100 MB.
    res.set_content_provider(
        file.bytes->size(), kElfType,
        [bytes = file.bytes](size_t offset, size_t length, httplib::DataSink& sink) {
          return offset < bytes->size() &&
                 sink.write(reinterpret_cast<const char*>(bytes->data()) + offset,
                            std::min(length, bytes->size() - offset));
        });
  }

  debuginfo::FallbackNames names_for(const httplib::Request& req) const {
    if (options.names) return *options.names;
    return req.get_header_value("User-Agent").starts_with(kElfutilsAgent)
               ? debuginfo::FallbackNames::None
               : debuginfo::FallbackNames::Lldb;
  }

  static void log(const httplib::Request& req, const httplib::Response& res) {
    // A body sent from a content provider is not in res.body: its length is in the header.
    const std::string size = res.body.empty() && res.has_header("Content-Length")
                                 ? res.get_header_value("Content-Length")
                                 : std::to_string(res.body.size());
    std::string line = fmt::format("{} {} {} {} {} bytes", req.remote_addr, req.method, req.path,
                                   res.status, size);
    if (res.has_header(kCacheHeader)) line += fmt::format(" {}", res.get_header_value(kCacheHeader));
    if (res.has_header(kReasonHeader)) line += fmt::format(": {}", res.get_header_value(kReasonHeader));
    fmt::print(stderr, "{}\n", line);  // one write: lines of concurrent requests do not mix
  }
};

DebuginfodServer::DebuginfodServer(const ModuleIndex& index, DebugFileCache& cache,
                                   ServerOptions options)
    : DebuginfodServer(
          [&index](std::string_view id) -> std::optional<IndexedModule> {
            const IndexedModule* module = index.find(id);
            return module ? std::optional(*module) : std::nullopt;
          },
          cache, std::move(options)) {}

DebuginfodServer::DebuginfodServer(ModuleFinder find, DebugFileCache& cache,
                                   ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(find), cache, std::move(options))) {
  Impl& impl = *impl_;
  impl.http.Get(R"(/buildid/([^/]*)/([^/]*))",
                [&impl](const httplib::Request& req, httplib::Response& res) { impl.buildid(req, res); });
  impl.http.set_error_handler([&impl](const httplib::Request&, httplib::Response& res) {
    if (!res.has_header(kReasonHeader))
      impl.refuse(res, res.status, fmt::format("status {}", res.status));
  });
  impl.http.set_exception_handler(
      [&impl](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        impl.refuse(res, 500, "internal error");
      });
  if (impl.options.log_requests) impl.http.set_logger(&Impl::log);
  impl.http.set_socket_options([&impl](socket_t sock) {
    httplib::default_socket_options(sock);
    impl.listen_socket = sock;
  });
  impl.http.set_payload_max_length(kMaxRequestBody);
  impl.http.set_read_timeout(kReadTimeoutSeconds);
  impl.http.set_write_timeout(kWriteTimeoutSeconds);
  impl.http.set_keep_alive_max_count(kKeepAliveRequests);
  const size_t threads = std::max<size_t>(1, impl.options.threads);
  impl.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
}

DebuginfodServer::~DebuginfodServer() = default;

Result<int> DebuginfodServer::bind() {
  Impl& impl = *impl_;
  if (impl.options.port == 0) {
    int port = impl.http.bind_to_any_port(impl.options.bind);
    if (port < 0) return fail("debuginfod", 0, impl.options.bind, "cannot bind");
    impl.widen_backlog();
    return port;
  }
  if (!impl.http.bind_to_port(impl.options.bind, impl.options.port))
    return fail("debuginfod", 0, fmt::format("{}:{}", impl.options.bind, impl.options.port),
                "cannot bind");
  impl.widen_backlog();
  return impl.options.port;
}

bool DebuginfodServer::run() { return impl_->http.listen_after_bind(); }

void DebuginfodServer::stop() { impl_->http.stop(); }

}  // namespace unwindkit::server
