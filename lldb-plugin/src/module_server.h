// An in-process debuginfod server that hands LLDB each module's synthesized debug file as the
// module loads, before any client (the prompt, lldb-dap, a script using the SB API) asks for a
// frame, with no command and no thread racing LLDB.
//
// LLDB 22 has no module-loaded callback on the command thread, but its debuginfod symbol
// locator asks `GET URL/buildid/<id>/debuginfo` synchronously while the module loads. The
// plugin puts this server's URL first in `plugin.symbol-locator.debuginfod.server-urls` (the
// user's URLs stay after it: a 404 sends LLDB on to them) and a private client cache path, so
// no file fetched by another session or an older plugin ever comes back.
//
// A request carries only the build-id. The files LLDB opens are learned from its own `module`
// log, delivered to a logging callback on the loading thread before the request is made
// (small executables are read into memory, so /proc/self/maps does not list them). Only files
// named there that have a table to restate (SFrame, `.trace`) are indexed, by the build-id
// read from the file itself; nothing else is served. A file made for the same content in an
// earlier session is linked into the private client cache as the file is named, where LLDB
// looks before asking: LLDB opens it in place, with no request.
//
// So the server answers only refusals while every module with tables has its file linked, and
// each answer costs LLDB's loading thread a connection (six for a program on a core: 4 ms of
// the 140 ms `target create` takes). A debugger with no debuginfod URL of its own therefore
// has the server's port reserved but not listened on: LLDB's request is refused at once, and a
// refused connection is a "not found" to LLDB as a 404 is. The server listens from the moment
// a module with tables is named whose file it could not link (or did not, while unwinding is
// disabled or paused): LLDB asks for that one after the log line, on the same thread. A module
// whose content has no file (its own CFI describes every function its SFrame does: what
// `-Wa,--gsframe` leaves) needs no answer, and the Installer leaves it as LLDB made it. With
// URLs of the user's after ours, it listens from the start: its 404 sends LLDB on to them,
// where a refusal would end LLDB's search.
//
// A module whose SFrame is over the wait limit (a browser-sized one: seconds of prologue
// analysis) and whose analyzed file no session made gets its quick file (no analysis: a
// twentieth of the time, callee-saved registers unavailable in callers), and a detached process makes
// the analyzed one for the sessions after (detached_maker.h).
#pragma once

#include <lldb/API/LLDB.h>

#include <atomic>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/server/debug_file_cache.h"
#include "unwindkit/server/debuginfod_server.h"
#include "unwindkit/server/module_index.h"

namespace unwindkit::lldb_plugin {

class ModuleServer {
 public:
  // The process's one server, its port reserved on first use; nullptr when it could not be
  // (the command-override path still installs side files then).
  static ModuleServer* instance();

  // Points `debugger` at the server: URL, client cache path and the module log; the server
  // listens at once if the debugger has debuginfod URLs of its own. Idempotent.
  void attach(lldb::SBDebugger debugger);
  // Whether `module`'s symbol file is one LLDB fetched from this server.
  bool served(lldb::SBModule module) const;
  // For a module LLDB made before the server could see it (one held before `plugin load`):
  // what its loading would have done, now, so that LLDB making it again finds its file as it
  // loads, and a module with none (no_file) is not made again for nothing.
  void prepare(const std::string& path, lldb::user_id_t debugger);
  // `unwindkit disable`: unknown to the server (404) until enabled again.
  void set_enabled(bool enabled) { enabled_ = enabled; }
  // While alive, the server answers 404: `target symbols add FILE` asks the debuginfod
  // servers for FILE's build-id first and would take the server's copy instead of FILE,
  // failing with "does not match any existing module".
  class Pause {
   public:
    explicit Pause(ModuleServer* server) : server_(server) {
      if (server_) ++server_->paused_;
    }
    ~Pause() {
      if (server_) --server_->paused_;
    }
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    ModuleServer* server_;
  };
  const std::string& url() const { return url_; }
  // `unwindkit set side-file-wait-limit`: bytes of SFrame above which LLDB gets a module's
  // quick file first (hand_over); kNoWaitLimit: always the analyzed one.
  // About 650,000 functions: a second or more of analysis.
  static constexpr uint64_t kDefaultWaitLimit = uint64_t{16} << 20;
  static constexpr uint64_t kNoWaitLimit = UINT64_MAX;
  void set_wait_limit(uint64_t bytes) { wait_limit_ = bytes; }
  uint64_t wait_limit() const { return wait_limit_; }
  // Whether the module of build-id `id` (hex) got its quick file in this session.
  bool quick(const std::string& id) {
    std::lock_guard lock(mutex_);
    return quick_.contains(id);
  }
  // Why the module of build-id `id` (hex) has no file, when the server found out as it loaded
  // (its own CFI describes every function, say): nothing for the Installer to add, so nothing
  // to make LLDB load again.
  std::optional<std::string> no_file(const std::string& id) {
    std::lock_guard lock(mutex_);
    const auto it = no_file_.find(id);
    return it == no_file_.end() ? std::nullopt : std::optional(it->second);
  }

 private:
  // A file LLDB named: whether it has tables to restate, and the module to hand LLDB a file
  // for now, if any.
  struct Named {
    bool tables = false;
    std::optional<server::IndexedModule> module;
    uint64_t sframe_bytes = 0;  // the module's SFrame section's size
  };

  // What a debugger's logging callback is given: the server and the debugger whose module log
  // it is (progress is shown in that debugger), by id: a debugger destroyed is not kept.
  struct Listener {
    ModuleServer* server;
    lldb::user_id_t debugger;
  };

  ModuleServer(std::filesystem::path client_cache);
  // Reserves the port: bound, not listened on (connections to it are refused).
  bool reserve();
  // Makes the server listen on the reserved port, once; the reservation then goes.
  void listen();
  static void on_log(const char* text, void* baton);
  // Indexes a file LLDB named, when it has tables to restate (under mutex_).
  Named index(const std::string& path);
  // Puts the file for `module`, made now if no session made it before (shown as progress in
  // `debugger`), where LLDB's download cache looks before it asks a server. False when no
  // file is there for LLDB to find and the server may have one to answer with; true too when
  // the module's content has none (no_file).
  // A module whose SFrame section is larger than the wait limit gets the quick file
  // (debuginfo::SynthesizeOptions::analyze) until its analyzed one is made.
  bool hand_over(server::IndexedModule module, uint64_t sframe_bytes, lldb::user_id_t debugger);
  // The analyzed file of `module`, made in a process of its own for the sessions after this.
  static void make_analyzed_later(const server::IndexedModule& module);
  std::optional<server::IndexedModule> find(std::string_view build_id);

  std::filesystem::path client_cache_;
  std::atomic<bool> enabled_{true};
  std::atomic<int> paused_{0};
  std::atomic<uint64_t> wait_limit_{kDefaultWaitLimit};
  std::mutex mutex_;
  std::set<std::string> named_;  // every path LLDB's log named
  std::set<std::string> linked_;  // build-ids of the modules whose file LLDB's cache has
  std::set<std::string> quick_;   // ... of those, the ones given their quick file
  std::map<std::string, std::string> no_file_;  // build-id: why its content has no file
  std::deque<Listener> listeners_;  // one per debugger attached, never moved
  server::ModuleIndex index_;
  server::DebugFileCache cache_;
  std::once_flag listening_;
  int reserved_socket_ = -1;
  int port_ = 0;
  std::unique_ptr<server::DebuginfodServer> http_;
  std::string url_;
};

}  // namespace unwindkit::lldb_plugin
