// `unwindkit debuginfod [--bind ADDR] [--port N] [--cache DIR] ... PATH...`: a debuginfod server
// handing out, for every indexed module, a debug file synthesized from its SFrame and `.trace`
// (server/), so that GDB, LLDB and lldb-dap unwind and name stripped modules with no plugin.
#include <dlfcn.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include "commands.h"
#include "debuginfod/serve.h"

namespace unwindkit::cli {

namespace {

// The server library (debuginfod/serve.h): installed, or next to the binary in the build tree.
std::filesystem::path server_library() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const char* relative : {UNWINDKIT_INSTALLED_DEBUGINFOD, kDebuginfodLibrary}) {
    const fs::path candidate = (exe_dir / relative).lexically_normal();
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  return exe_dir / UNWINDKIT_INSTALLED_DEBUGINFOD;  // named in the error below
}

int serve(const DebuginfodArgs& args) {
  const std::string library = server_library().string();
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  using Serve = int (*)(const DebuginfodArgs&);
  auto* entry = handle ? reinterpret_cast<Serve>(::dlsym(handle, kDebuginfodEntry)) : nullptr;
  if (entry == nullptr) {
    std::fprintf(stderr, "unwindkit: cannot load the server: %s\n", ::dlerror());
    return kExitDataProblem;
  }
  return entry(args);
}

}  // namespace

void add_debuginfod_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DebuginfodArgs>();
  CLI::App* cmd = app.add_subcommand(
      "debuginfod", "Serve synthesized debug files (.debug_frame from SFrame, names, .trace lines) "
                    "to debuginfod clients, keyed by build-id");
  cmd->add_option("--bind", args->server.bind, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", args->server.port, "Port (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--cache", args->cache_dir, "Folder keeping synthesized files across restarts");
  cmd->add_option("--cache-max-mib", args->cache_max_mib,
                  "Bound on the --cache folder: the least recently used files go first "
                  "(default: no bound)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 30));
  cmd->add_option("--memory-mib", args->memory_mib,
                  "Synthesized files kept in memory: the least recently asked-for go first "
                  "(read back from --cache, or made again)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--names", args->names,
                  "Names of functions known only from SFrame: lldb (___lldb_unnamed_symbol_ADDR, "
                  "as LLDB names them), none (GDB then shows its `?? ()`) or auto (none for GDB, "
                  "told by libdebuginfod's User-Agent, lldb for other clients)")
      ->check(CLI::IsMember({"auto", "lldb", "none"}))
      ->capture_default_str();
  cmd->add_option("--threads", args->server.threads, "Requests served at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--upstream", args->upstream,
                  "Servers (debuginfod URLs, tried in order) asked for an executable whose "
                  "build-id is not indexed; what comes is checked, synthesized and cached "
                  "(default: DEBUGINFOD_URLS, less this server's own URL)")
      // One URL per --upstream: the PATHs after it are not URLs.
      ->allow_extra_args(false);
  cmd->add_option("--forwarded-ttl-limit", args->forwarded_hops,
                  "A request whose X-Forwarded-For has this many hops is not passed upstream "
                  "(as elfutils' debuginfod: a loop of servers ends)")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  cmd->add_option("-t,--rescan", args->rescan_seconds,
                  "Scan the PATHs again every SECONDS: new builds are served, removed or changed "
                  "ones no longer as they were (0: at start only)")
      ->check(CLI::Range(0u, 86400u))
      ->capture_default_str();
  cmd->add_option("--max-connections", args->server.max_connections,
                  "Connections open at once; one more is closed as it is accepted")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-connections-per-client", args->server.max_connections_per_client,
                  "Connections open at once from one client address")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-file-mib", args->max_file_mib, "Larger files are not indexed")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("PATH", args->paths, "ELF files, folders (scanned recursively) and cores")
      ->required();
  cmd->callback([args, &exit_code] { exit_code = serve(*args); });
}

}  // namespace unwindkit::cli
