// The debuginfod HTTP front (see debuginfod_server.h and connection_model.h).
//
// libmicrohttpd, not cpp-httplib: cpp-httplib gives each connection a thread for its whole
// life (an idle keep-alive connection or a client sending a byte a second holds one of the 16)
// and restarts its read timeout on every byte, with no bound on headers or on connections
// per client. libmicrohttpd (elfutils' debuginfod's HTTP stack, in Debian 12 to sid) holds
// connections in one epoll loop, bounds them in all and per client address, bounds each one's
// memory (headers included), sends files with sendfile, and lets an answer be made on another
// thread while its connection waits, suspended. What it lacks, a deadline for the whole
// request, the sweep below adds.
#include "unwindkit/server/debuginfod_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_set>

#include "listen_socket.h"
#include "metrics.h"
#include "log_text.h"
#include "unwindkit/server/connection_model.h"
#include "worker_pool.h"

namespace unwindkit::server {
namespace {

constexpr const char* kCacheHeader = "X-Unwindkit-Cache";
// Why a request was refused, for a client that reads headers only.
constexpr const char* kReasonHeader = "X-Unwindkit-Reason";
constexpr const char* kElfType = "application/octet-stream";
constexpr const char* kTextType = "text/plain";
// libdebuginfod's User-Agent starts so: the client is GDB (or another elfutils tool).
constexpr std::string_view kElfutilsAgent = "elfutils/";
constexpr const char* kForwardedForHeader = "X-Forwarded-For";
constexpr std::string_view kBuildIdPrefix = "/buildid/";
constexpr std::string_view kMetricsPath = "/metrics";
constexpr const char* kMetricsType = "text/plain; version=0.0.4";  // Prometheus' text format
// How often connections past their request deadline are looked for: a deadline is kept to
// within this.
constexpr auto kSweepPeriod = std::chrono::milliseconds(250);

using Clock = std::chrono::steady_clock;

// One connection (libmicrohttpd's socket context), from its accepting to its closing.
struct Connection {
  int fd = -1;
  std::string client;  // its address, for the log
  // When the request being received must be whole (connection_model.h).
  Clock::time_point deadline;
  bool answering = false;  // its request is whole: its answer is being made or sent
  bool cut = false;        // shut down for its deadline
};

// One request (libmicrohttpd's request context).
struct Request {
  size_t body = 0;  // bytes of body received
  bool dispatched = false;  // handed to a worker
  bool made = false;        // the worker is done: the answer (null: no memory for one) is in
  // The answer, made on a worker and queued by the event loop once the connection resumes.
  MHD_Response* response = nullptr;
  unsigned status = 0;
  std::string method, path, log_tail;
};

std::string address_text(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address == nullptr) return text;
  if (address->sa_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  else if (address->sa_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text, sizeof text);
  return text;
}

// A response whose body `owner` keeps alive until libmicrohttpd is done with it.
template <typename Owner>
MHD_Response* response_holding(std::shared_ptr<const Owner> owner) {
  auto* held = new std::shared_ptr<const Owner>(std::move(owner));
  MHD_Response* response = MHD_create_response_from_buffer_with_free_callback_cls(
      (*held)->size(), const_cast<typename Owner::value_type*>((*held)->data()),
      [](void* cls) { delete static_cast<std::shared_ptr<const Owner>*>(cls); }, held);
  if (response == nullptr) delete held;
  return response;
}

MHD_Response* text_response(std::string text) {
  return response_holding(std::make_shared<const std::string>(std::move(text)));
}

}  // namespace

struct DebuginfodServer::Impl {
  Impl(ModuleFinder f, DebugFileCache& c, ServerOptions o)
      : find(std::move(f)), cache(c), options(std::move(o)) {}

  ~Impl() {
    {
      std::lock_guard lock(sweep_mutex);
      sweeping = false;
    }
    sweep_wake.notify_all();
    if (sweeper.joinable()) sweeper.join();
    workers.reset();  // every suspended connection resumed, its answer made
    if (daemon != nullptr) MHD_stop_daemon(daemon);
    for (int fd : stop_pipe)
      if (fd >= 0) ::close(fd);
  }

  ModuleFinder find;
  DebugFileCache& cache;
  ServerOptions options;
  std::unique_ptr<WorkerPool> workers;
  MHD_Daemon* daemon = nullptr;
  int stop_pipe[2] = {-1, -1};

  std::mutex connections_mutex;
  std::unordered_set<Connection*> connections;
  Metrics metrics;

  std::mutex sweep_mutex;
  std::condition_variable sweep_wake;
  bool sweeping = true;
  std::thread sweeper;

  // A refusal: its reason in a header and, unless the options say otherwise, as the body. It
  // never names a path on this machine (the request's build-id says which module it is).
  void refuse(Request& request, unsigned status, std::string_view reason) const {
    const std::string text = escaped_for_log(reason);
    request.status = status;
    request.response = text_response(options.refusal_bodies ? text : std::string());
    if (request.response == nullptr) return;
    MHD_add_response_header(request.response, kReasonHeader, text.c_str());
    if (options.refusal_bodies) MHD_add_response_header(request.response, MHD_HTTP_HEADER_CONTENT_TYPE, kTextType);
    request.log_tail = fmt::format("{} bytes: {}", options.refusal_bodies ? text.size() : 0, text);
  }

  void send_file(Request& request, MHD_Response* response, uint64_t size, std::string_view source) {
    request.status = MHD_HTTP_OK;
    request.response = response;
    if (response == nullptr) return;
    metrics.answered(source, request.method == MHD_HTTP_METHOD_HEAD ? 0 : size);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, kElfType);
    if (!source.empty()) MHD_add_response_header(response, kCacheHeader, std::string(source).c_str());
    request.log_tail = source.empty() ? fmt::format("{} bytes", size) : fmt::format("{} bytes {}", size, source);
  }

  debuginfo::FallbackNames names_for(std::string_view agent) const {
    if (options.names) return *options.names;
    return agent.starts_with(kElfutilsAgent) ? debuginfo::FallbackNames::None
                                             : debuginfo::FallbackNames::Lldb;
  }

  // On a worker: the answer to GET/HEAD /buildid/ID/KIND.
  // `forwarded_for`: what an upstream fetch sends as X-Forwarded-For.
  void make_answer(Request& request, std::string_view id_text, std::string_view kind,
                   debuginfo::FallbackNames names, const std::string& forwarded_for) {
    const std::string id = normalize_build_id(id_text);
    if (id.empty()) return refuse(request, MHD_HTTP_BAD_REQUEST, "not a build-id");
    if (kind != "debuginfo" && (kind != "executable" || !options.executables))
      return refuse(request, MHD_HTTP_NOT_FOUND, fmt::format("not served: {}", kind));
    std::optional<IndexedModule> module = find(id);
    if (!module && options.upstream) {
      const Fetch fetch = options.upstream->fetch(id, forwarded_for);
      metrics.fetched(fetch);
      if (fetch.result == FetchResult::Busy)
        return refuse(request, MHD_HTTP_SERVICE_UNAVAILABLE, fetch.why);
      if (!fetch.module) return refuse(request, MHD_HTTP_NOT_FOUND, fetch.why);
      module = fetch.module;
    }
    if (!module) return refuse(request, MHD_HTTP_NOT_FOUND, "unknown build-id");
    if (!unchanged(*module)) return refuse(request, MHD_HTTP_NOT_FOUND, "the file changed since it was indexed");
    if (kind == "executable") {
      // Sent from the file (sendfile), checked to be the very file indexed.
      Result<UniqueFd> fd = open_indexed_file(*module);
      if (!fd) return refuse(request, MHD_HTTP_NOT_FOUND, fd.error().message);
      return send_file(request, MHD_create_response_from_fd64(module->size, fd->release()), module->size, "");
    }
    CacheSource source = CacheSource::Made;
    const CachedFile file = cache.get(*module, source, names);
    if (!file.bytes) return refuse(request, MHD_HTTP_NOT_FOUND, file.note);
    // From the folder when it keeps the file (its seal checked), so that a connection that
    // does not read holds no memory; from the memory copy otherwise, which --memory-mib
    // counts while it is cached.
    if (Result<SealedFile> stored = cache.open_stored(*module, names)) {
      const uint64_t size = stored->size;
      return send_file(request, MHD_create_response_from_fd64(size, stored->fd.release()), size,
                       cache_source_name(source));
    }
    send_file(request, response_holding(file.bytes), file.bytes->size(), cache_source_name(source));
  }

  // On the event loop: each call libmicrohttpd makes for a request (its headers whole, each
  // piece of its body, its end, and once more after a worker resumes it).
  MHD_Result on_request(MHD_Connection* c, const char* url, const char* method,
                        size_t* upload_data_size, void** request_context) {
    auto* request = static_cast<Request*>(*request_context);
    if (request == nullptr) {  // the headers are in
      request = new Request;
      *request_context = request;
      request->method = method;
      request->path = url;
      const char* length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
      size_t declared = 0;
      if (length != nullptr) {
        const std::string_view text(length);
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), declared);
        if (ec != std::errc() || end != text.data() + text.size() || declared > kMaxRequestBody) {
          refuse(*request, MHD_HTTP_CONTENT_TOO_LARGE,
                 fmt::format("a request body of {} bytes (at most {})", text, kMaxRequestBody));
          return queue(c, *request);
        }
      }
      return MHD_YES;
    }
    if (*upload_data_size != 0) {  // a body, discarded; one past the bound ends the connection
      request->body += *upload_data_size;
      *upload_data_size = 0;
      return request->body > kMaxRequestBody ? MHD_NO : MHD_YES;
    }
    if (request->made) return queue(c, *request);  // a worker's answer, the connection resumed
    if (request->dispatched) return MHD_YES;
    mark_answering(c);
    const std::string_view verb(method);
    if (verb != MHD_HTTP_METHOD_GET && verb != MHD_HTTP_METHOD_HEAD) {
      refuse(*request, MHD_HTTP_METHOD_NOT_ALLOWED, fmt::format("method {} (GET and HEAD only)", verb));
      if (request->response) MHD_add_response_header(request->response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
      return queue(c, *request);
    }
    std::string_view path(url);
    if (path == kMetricsPath) {  // answered here: counters only, no file
      std::string text;
      {
        std::lock_guard lock(connections_mutex);
        text = metrics.text(cache.made(), connections.size());
      }
      request->status = MHD_HTTP_OK;
      const size_t size = text.size();
      request->response = text_response(std::move(text));
      if (request->response != nullptr)
        MHD_add_response_header(request->response, MHD_HTTP_HEADER_CONTENT_TYPE, kMetricsType);
      request->log_tail = fmt::format("{} bytes", size);
      return queue(c, *request);
    }
    if (!path.starts_with(kBuildIdPrefix)) {
      refuse(*request, MHD_HTTP_NOT_FOUND, "not found");
      return queue(c, *request);
    }
    path.remove_prefix(kBuildIdPrefix.size());
    const size_t slash = path.find('/');
    if (slash == std::string_view::npos || path.find('/', slash + 1) != std::string_view::npos) {
      refuse(*request, MHD_HTTP_NOT_FOUND, "not found");
      return queue(c, *request);
    }
    const char* agent = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT);
    const debuginfo::FallbackNames names = names_for(agent != nullptr ? agent : "");
    // The chain of clients this request came through, with its own (as elfutils' debuginfod
    // passes it upstream): the hops a loop of servers makes are counted.
    std::string forwarded_for;
    if (options.upstream) {
      const char* earlier = MHD_lookup_connection_value(c, MHD_HEADER_KIND, kForwardedForHeader);
      const Connection* connection = connection_of(c);
      forwarded_for = earlier != nullptr && *earlier != '\0' ? fmt::format("{}, ", earlier) : "";
      forwarded_for += connection != nullptr ? connection->client : "?";
    }
    request->dispatched = true;
    MHD_suspend_connection(c);
    workers->post([this, c, request, id = std::string(path.substr(0, slash)),
                   kind = std::string(path.substr(slash + 1)), names, forwarded_for] {
      try {
        make_answer(*request, id, kind, names, forwarded_for);
      } catch (const std::exception&) {  // out of memory: a 500 for this request, not a crash
        if (request->response != nullptr) MHD_destroy_response(request->response);
        request->response = nullptr;
        refuse(*request, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error");
      }
      request->made = true;
      MHD_resume_connection(c);
    });
    return MHD_YES;
  }

  MHD_Result queue(MHD_Connection* c, Request& request) {
    if (request.response == nullptr) return MHD_NO;  // no memory for even a refusal: closed
    const Connection* connection = connection_of(c);
    if (options.log_requests)  // one write: lines of concurrent requests do not mix
      fmt::print(stderr, "{} {} {} {} {}\n", connection ? connection->client : "?",
                 escaped_for_log(request.method), escaped_for_log(request.path), request.status,
                 request.log_tail);
    metrics.requested(request.status);
    const MHD_Result queued = MHD_queue_response(c, request.status, request.response);
    MHD_destroy_response(request.response);
    request.response = nullptr;
    return queued;
  }

  static Connection* connection_of(MHD_Connection* c) {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != nullptr ? static_cast<Connection*>(info->socket_context) : nullptr;
  }

  void mark_answering(MHD_Connection* c) {
    std::lock_guard lock(connections_mutex);
    if (Connection* connection = connection_of(c)) connection->answering = true;
  }

  void on_completed(MHD_Connection* c, void** request_context) {
    auto* request = static_cast<Request*>(*request_context);
    if (request != nullptr && request->response != nullptr) MHD_destroy_response(request->response);
    delete request;
    *request_context = nullptr;
    std::lock_guard lock(connections_mutex);
    if (Connection* connection = connection_of(c)) {  // the next request's clock starts
      connection->answering = false;
      connection->deadline = Clock::now() + std::chrono::seconds(kRequestDeadlineSeconds);
    }
  }

  void on_connection(MHD_Connection* c, void** socket_context, MHD_ConnectionNotificationCode code) {
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      auto* connection = new Connection;
      if (const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))
        connection->fd = info->connect_fd;
      if (const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS))
        connection->client = address_text(info->client_addr);
      // Headers and body leave without waiting for the client's delayed ACK (Nagle's 40 ms on
      // every keep-alive request but the first).
      const int yes = 1;
      ::setsockopt(connection->fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      connection->deadline = Clock::now() + std::chrono::seconds(kRequestDeadlineSeconds);
      metrics.accepted();
      std::lock_guard lock(connections_mutex);
      connections.insert(connection);
      *socket_context = connection;
      return;
    }
    // Called before libmicrohttpd closes the socket: the sweep, under the same lock, never
    // shuts down a descriptor that was closed and reused.
    auto* connection = static_cast<Connection*>(*socket_context);
    std::lock_guard lock(connections_mutex);
    connections.erase(connection);
    delete connection;
    *socket_context = nullptr;
  }

  // Shuts down every connection whose request is not whole by its deadline; libmicrohttpd
  // then reads the end of its stream and closes it.
  void sweep() {
    std::unique_lock wait_lock(sweep_mutex);
    while (!sweep_wake.wait_for(wait_lock, kSweepPeriod, [this] { return !sweeping; })) {
      const Clock::time_point now = Clock::now();
      std::lock_guard lock(connections_mutex);
      for (Connection* connection : connections)
        if (!connection->answering && !connection->cut && now > connection->deadline) {
          ::shutdown(connection->fd, SHUT_RDWR);
          connection->cut = true;
        }
    }
  }
};

DebuginfodServer::DebuginfodServer(ModuleFinder find, DebugFileCache& cache,
                                   ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(find), cache, std::move(options))) {}

DebuginfodServer::~DebuginfodServer() = default;

Result<int> DebuginfodServer::bind() {
  Impl& impl = *impl_;
  Result<ListenSocket> socket = impl.options.listen_fd >= 0
                                    ? listen_on_bound(std::exchange(impl.options.listen_fd, -1))
                                    : listen_on(impl.options.bind, impl.options.port);
  if (!socket) return tl::unexpected(socket.error());
  if (::pipe2(impl.stop_pipe, O_CLOEXEC) != 0)
    return fail(ErrorKind::Io, "debuginfod", 0, "stop pipe", std::strerror(errno));
  impl.workers = std::make_unique<WorkerPool>(std::max<size_t>(1, impl.options.threads));
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
  if (socket->ipv6) flags |= MHD_USE_IPv6;
  const int port = socket->port;
  const int fd = socket->fd.release();  // libmicrohttpd's from here (it closes it when stopped)
  impl.daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr,
      [](void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
         const char*, size_t* upload_data_size, void** request_context) {
        return static_cast<Impl*>(cls)->on_request(c, url, method, upload_data_size, request_context);
      },
      &impl, MHD_OPTION_LISTEN_SOCKET, fd,
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(impl.options.max_connections),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<unsigned>(impl.options.max_connections_per_client),
      MHD_OPTION_CONNECTION_TIMEOUT, kStalledSeconds,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemory,
      MHD_OPTION_NOTIFY_COMPLETED,
      static_cast<MHD_RequestCompletedCallback>(
          [](void* cls, MHD_Connection* c, void** request_context, MHD_RequestTerminationCode) {
            static_cast<Impl*>(cls)->on_completed(c, request_context);
          }),
      &impl, MHD_OPTION_NOTIFY_CONNECTION,
      static_cast<MHD_NotifyConnectionCallback>(
          [](void* cls, MHD_Connection* c, void** socket_context, MHD_ConnectionNotificationCode code) {
            static_cast<Impl*>(cls)->on_connection(c, socket_context, code);
          }),
      &impl, MHD_OPTION_END);
  if (impl.daemon == nullptr) {
    ::close(fd);
    return fail(ErrorKind::Io, "debuginfod", 0, url_of(impl.options.bind, port),
                "libmicrohttpd could not start");
  }
  impl.sweeper = std::thread([&impl] { impl.sweep(); });
  return port;
}

bool DebuginfodServer::run() {
  if (impl_->daemon == nullptr) return false;
  pollfd wait{impl_->stop_pipe[0], POLLIN, 0};
  while (::poll(&wait, 1, -1) < 0 && errno == EINTR) {
  }
  return true;
}

void DebuginfodServer::stop() {
  if (impl_->stop_pipe[1] < 0) return;
  [[maybe_unused]] const ssize_t written = ::write(impl_->stop_pipe[1], "x", 1);
}

}  // namespace unwindkit::server
