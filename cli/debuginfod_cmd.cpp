// `unwindkit debuginfod [--bind ADDR] [--port N] [--cache DIR] ... PATH...`: a debuginfod server
// handing out, for every indexed module, a debug file synthesized from its SFrame and `.trace`
// (server/), so that GDB, LLDB and lldb-dap unwind and name stripped modules with no plugin.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "unwindkit/server/debug_file_cache.h"
#include "unwindkit/server/debuginfod_server.h"

namespace unwindkit::cli {

void add_debuginfod_command(CLI::App& app, int& exit_code) {
  struct Args {
    server::ServerOptions server;
    std::string cache_dir;
    std::string names = "auto";
    uint64_t max_file_mib = 512;
    uint64_t memory_mib = server::kDefaultMemoryBudget >> 20;
    std::optional<uint64_t> cache_max_mib;
    std::vector<std::string> paths;
  };
  auto args = std::make_shared<Args>();
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
  cmd->add_option("--max-file-mib", args->max_file_mib, "Larger files are not indexed")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("PATH", args->paths, "ELF files, folders (scanned recursively) and cores")
      ->required();
  cmd->callback([args, &exit_code] {
    // A client hanging up mid-answer must not end the server.
    std::signal(SIGPIPE, SIG_IGN);
    std::vector<std::string> notes;
    server::IndexOptions index_options;
    index_options.max_file_size = args->max_file_mib << 20;
    const server::ModuleIndex index = server::ModuleIndex::scan(args->paths, index_options, notes);
    for (const std::string& note : notes) fmt::print(stderr, "unwindkit: {}\n", note);
    fmt::print(stderr, "unwindkit: indexed {} modules\n", index.size());

    if (args->names != "auto")
      args->server.names =
          args->names == "lldb" ? debuginfo::FallbackNames::Lldb : debuginfo::FallbackNames::None;
    std::optional<std::filesystem::path> cache_dir;
    if (!args->cache_dir.empty()) cache_dir = args->cache_dir;
    server::CacheLimits limits;
    limits.memory = args->memory_mib << 20;
    if (args->cache_max_mib) limits.disk = *args->cache_max_mib << 20;
    server::DebugFileCache cache(cache_dir, {}, limits);
    server::DebuginfodServer http(index, cache, args->server);
    auto port = http.bind();
    if (!port) {
      fmt::print(stderr, "unwindkit: {}\n", port.error().to_string());
      exit_code = kExitUsage;
      return;
    }
    fmt::print("listening on http://{}:{}\n", args->server.bind, *port);
    std::fflush(stdout);
    exit_code = http.run() ? kExitOk : kExitDataProblem;
  });
}

}  // namespace unwindkit::cli
