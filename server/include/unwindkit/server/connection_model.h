// How `unwindkit debuginfod` bounds each client (docs/debuginfod.md, "Bounds"): what a slow or
// hostile client can hold, and for how long. libmicrohttpd's event loop holds every
// connection, so an idle or slow one costs no thread; answers are made by ServerOptions::
// threads workers while their connection waits, suspended.
#pragma once

#include <cstddef>

namespace unwindkit::server {

// A request, from its connection's accepting (or the previous answer on it) until its last
// header and body byte: a client that sends a byte a second is cut off then, not every byte
// restarting the clock. An idle keep-alive connection is closed after it too.
inline constexpr unsigned kRequestDeadlineSeconds = 10;
// A connection on which nothing moves (a download its client does not read) is closed after
// this long.
inline constexpr unsigned kStalledSeconds = 30;
// Memory of one connection: its request line and headers must fit (a request with more is
// answered 431 or 413 and closed), and libmicrohttpd's own state. Files are sent from disk
// (sendfile) and from memory already counted by --memory-mib: no copy per connection.
inline constexpr size_t kConnectionMemory = size_t{16} << 10;
// A debuginfod request is a GET: a body larger than this is refused (413).
inline constexpr size_t kMaxRequestBody = 1024;

}  // namespace unwindkit::server
