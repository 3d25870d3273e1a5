// The in-process debuginfod server (see module_server.h).
#include "module_server.h"

#include <arpa/inet.h>
#include <elf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#include "detached_maker.h"
#include "lldb_compat.h"
#include "module_tables.h"
#include "private_dir.h"
#include "unwindkit/bytes.h"
#include "unwindkit/elf/constants.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/trace/constants.h"

namespace unwindkit::lldb_plugin {
namespace {

constexpr const char* kUrlsSetting = "plugin.symbol-locator.debuginfod.server-urls";
constexpr const char* kCacheSetting = "plugin.symbol-locator.debuginfod.cache-path";
constexpr const char* kHost = "127.0.0.1";
// The log channel and category whose lines name every file LLDB makes a module of
// ("Module::Module((x86_64) '/path')"), before it asks for the module's debug info.
constexpr const char* kLogChannel = "lldb";
constexpr std::array<const char*, 2> kLogCategories = {"module", nullptr};
constexpr size_t kSettingTextMax = 4096;
// LLDB 22's debuginfod client (LLVM's file cache) keeps the debug file of build-id ID as
// `<cache path>/llvmcache-ID` and opens that before asking any server.
constexpr const char* kClientCachePrefix = "llvmcache-";
// Where LLDB's default symbol locator finds a debug file by build-id, under each folder of
// `target.debug-file-search-paths`: `.build-id/<first two hex digits>/<the rest>.debug`. The
// route for an LLDB that reads no served file (lldb_reads_served_files).
constexpr const char* kSearchPathsSetting = "target.debug-file-search-paths";
constexpr const char* kBuildIdFolder = ".build-id";
constexpr const char* kBuildIdSuffix = ".debug";
// The served files kept between sessions, all modules together (GDB's side files too have a
// gibibyte); a 1 M-function module's is 37 MB.
constexpr uint64_t kServedBytes = uint64_t{1} << 30;
// In the served folder: one byte locked per analyzed file being made for later sessions, at
// the hash of the module's build-id (modules sharing a byte only wait for each other).
constexpr const char* kMakingLock = ".making.lock";
constexpr size_t kLockBytes = 0xffff;

// Every absolute path quoted in a log line.
std::vector<std::string> quoted_paths(std::string_view line) {
  std::vector<std::string> paths;
  for (size_t open = line.find("'/"); open != std::string_view::npos;
       open = line.find("'/", open + 1)) {
    const size_t close = line.find('\'', open + 1);
    if (close == std::string_view::npos) break;
    paths.emplace_back(line.substr(open + 1, close - open - 1));
    open = close;
  }
  return paths;
}

// Whether `path` is an ELF core, from its first bytes.
bool is_core(const std::string& path) {
  std::array<uint8_t, elf::kOffType + sizeof(uint16_t)> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(header.data()), header.size()) ||
      std::memcmp(header.data(), ELFMAG, SELFMAG) != 0)
    return false;
  ByteReader reader(Bytes(header.data(), header.size()),
                    header[EI_DATA] == ELFDATA2MSB ? Endian::Big : Endian::Little, "ELF header");
  auto type = reader.seek(elf::kOffType, "e_type").and_then([&] { return reader.u16("e_type"); });
  return type && *type == elf::kTypeCore;
}

// The build-id (hex) of a file a side file could be made of: one with an SFrame-family
// section or `.trace` (what debuginfo::synthesize restates), judged from the section headers
// alone. Most files LLDB opens (libc, ld.so) have neither: they are answered 404 without being
// read and hashed. Mapped: only the headers' pages are read. Cores are not looked at: LLDB's
// log names every file a core maps as that file loads, so reading one (often many MiB) for its
// NT_FILE list would double the time LLDB takes to open it.
struct TableFile {
  std::string build_id;
  uint64_t sframe_bytes = 0;  // the size of its SFrame-family section (0: none)
};
std::optional<TableFile> table_file(const std::string& path) {
  if (is_core(path)) return std::nullopt;
  auto file = elf::ElfFile::map(path);
  if (!file) return std::nullopt;
  const auto sframe = sframe::find_section(*file);
  if (!sframe && file->section(trace::kSectionName) == nullptr) return std::nullopt;
  auto id = file->build_id();
  if (!id || id->empty()) return std::nullopt;
  return TableFile{fmt::format("{:02x}", fmt::join(*id, "")), sframe ? sframe->section->size : 0};
}

std::vector<std::string> string_array(lldb::SBStructuredData data) {
  std::vector<std::string> out;
  for (size_t i = 0; i < data.GetSize(); ++i) {
    char text[kSettingTextMax] = {};
    data.GetItemAtIndex(i).GetStringValue(text, sizeof text);
    if (*text) out.emplace_back(text);
  }
  return out;
}

void run_command(lldb::SBDebugger debugger, const std::string& command) {
  lldb::SBCommandReturnObject result;
  debugger.GetCommandInterpreter().HandleCommand(command.c_str(), result, false);
}

// The files the server made, kept between sessions (keyed by build-id and the module file's
// content hash): a large module is synthesized once, not in every LLDB process.
std::optional<std::filesystem::path> served_cache_dir() {
  auto dir = side_file_cache_dir() / "served";
  if (!private_dir(dir)) return std::nullopt;
  return dir;
}

// How the served files are made and how many are kept.
debuginfo::SynthesizeOptions served_options() {
  return {.fallback_names = lldb_names(), .lldb_loads_it = lldb_reads_served_files()};
}
server::CacheLimits served_limits() { return {0, kServedBytes}; }

// The index remembers each module's content hash beside the files made of it: a large
// module is not read and hashed again in every session to find its file.
server::IndexOptions index_options() {
  server::IndexOptions options;
  if (auto dir = served_cache_dir()) options.memo_dir = *dir / "identities";
  options.hash_later = true;  // hand_over hashes a module when its file is keyed by the hash
  return options;
}

}  // namespace

// LLDB reads each file from the folder (hand_over) or takes it once over HTTP: the server
// keeps none in memory once made (a 1 M-function module's is 37 MB). The folder keeps the
// files of the modules most recently debugged, kServedBytes of them.
ModuleServer::ModuleServer(std::filesystem::path client_cache)
    : client_cache_(std::move(client_cache)),
      index_(index_options()),
      cache_(served_cache_dir(), served_options(), served_limits()) {}

namespace {

// LLDB's download cache for this process: `<tmp>/unwindkit-lldb-dl-<uid>/<pid>`. Private to
// the process, because LLDB keys its cache by build-id only and a file fetched by an older
// plugin or another server would otherwise be reused. LLDB may end without running atexit
// handlers, so each start also removes the folders of processes that are gone.
std::optional<std::filesystem::path> client_cache_dir() {
  std::error_code ec;
  // TMPDIR naming no folder: no server (the plugin still installs side files by command).
  const auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) return std::nullopt;
  const auto base = tmp / fmt::format("unwindkit-lldb-dl-{}", ::getuid());
  if (!private_dir(base)) return std::nullopt;
  for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    char* end = nullptr;
    const long pid = std::strtol(name.c_str(), &end, 10);
    if (end != name.c_str() && *end == '\0' && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
        errno == ESRCH)
      std::filesystem::remove_all(entry.path(), ec);
  }
  auto dir = base / std::to_string(::getpid());
  std::filesystem::remove_all(dir, ec);  // a folder left by an earlier process with our pid
  if (!std::filesystem::create_directory(dir, ec) || ec) return std::nullopt;
  return dir;
}

}  // namespace

ModuleServer* ModuleServer::instance() {
  static ModuleServer* server = []() -> ModuleServer* {
    const auto dir = client_cache_dir();
    if (!dir) return nullptr;
    auto* made = new ModuleServer(*dir);  // lives as long as the process: LLDB never unloads
    if (made->reserve()) {
      std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(server->client_cache_, ec);
      });
      return made;
    }
    delete made;
    return nullptr;
  }();
  return server;
}

bool ModuleServer::reserve() {
  // A client hanging up mid-answer must not end the debugger.
  std::signal(SIGPIPE, SIG_IGN);
  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return false;
  // Bound, not listened on: a connection to it is refused until listen() hands this very
  // socket to the server, so no other socket can take the port in between.
  sockaddr_in address{};
  address.sin_family = AF_INET;
  socklen_t length = sizeof address;
  if (::inet_pton(AF_INET, kHost, &address.sin_addr) != 1 ||
      ::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(sock, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(sock);
    return false;
  }
  reserved_socket_ = sock;
  port_ = ntohs(address.sin_port);
  url_ = fmt::format("http://{}:{}", kHost, port_);
  return true;
}

void ModuleServer::listen() {
  std::call_once(listening_, [this] {
    server::ServerOptions options;
    options.bind = kHost;
    options.port = port_;
    // LLDB loads a few modules at once; a request beyond these waits its turn (each is short).
    options.threads = 2;
    options.log_requests = false;
    // LLDB reads no reason: most answers are refusals (every module without tables), unbodied.
    options.refusal_bodies = false;
    // LLDB has the module it asks about: its file is never sent back to it.
    options.executables = false;
    options.names = lldb_names();  // this LLDB's, whatever its client says
    options.listen_fd = std::exchange(reserved_socket_, -1);  // the server's from here
    http_ = std::make_unique<server::DebuginfodServer>(
        [this](std::string_view id) { return find(id); }, cache_, options);
    // Not listening, LLDB's requests are refused as before: the command-override path still
    // installs side files. The server serves on threads of its own.
    static_cast<void>(http_->bind());
  });
}

void ModuleServer::attach(lldb::SBDebugger debugger) {
  std::vector<std::string> urls = string_array(debugger.GetSetting(kUrlsSetting));
  if (urls.empty() || urls.front() != url_) {
    // The setting starts as DEBUGINFOD_URLS: those stay, after ours.
    std::string command = fmt::format("settings set {} \"{}\"", kUrlsSetting, url_);
    for (const std::string& url : urls)
      if (url != url_) command += fmt::format(" \"{}\"", url);
    run_command(debugger, command);
    run_command(debugger, fmt::format("settings set {} \"{}\"", kCacheSetting,
                                      client_cache_.string()));
    if (!lldb_reads_served_files()) {
      // The global value (-g): LLDB's symbol locator reads that one, never a target's copy,
      // and with a target made already a plain `settings append` changes only the target's.
      std::vector<std::string> paths = string_array(debugger.GetSetting(kSearchPathsSetting));
      std::erase(paths, client_cache_.string());
      paths.push_back(client_cache_.string());
      std::string set = fmt::format("settings set -g -- {}", kSearchPathsSetting);
      for (const std::string& path : paths) set += fmt::format(" \"{}\"", path);
      run_command(debugger, set);
    }
  }
  Listener* listener = nullptr;
  {
    std::lock_guard lock(mutex_);
    for (Listener& l : listeners_)
      if (l.debugger == debugger.GetID()) listener = &l;
    if (listener == nullptr) listener = &listeners_.emplace_back(Listener{this, debugger.GetID()});
  }
  debugger.SetLoggingCallback(&ModuleServer::on_log, listener);
  std::array categories = kLogCategories;
  debugger.EnableLog(kLogChannel, categories.data());
  // The user's servers are asked after ours only on its 404: a refusal would end the search.
  if (std::any_of(urls.begin(), urls.end(), [this](const std::string& url) { return url != url_; }))
    listen();
}

// On LLDB's loading thread, as LLDB makes a module of the file and before it asks for the
// module's debug file.
void ModuleServer::on_log(const char* text, void* baton) {
  if (text == nullptr) return;
  auto* listener = static_cast<Listener*>(baton);
  ModuleServer* self = listener->server;
  std::vector<std::pair<server::IndexedModule, uint64_t>> modules;  // with its SFrame's size
  bool unlinked = false;  // a module with tables LLDB will ask the server for
  {
    std::lock_guard lock(self->mutex_);
    for (const std::string& path : quoted_paths(text)) {
      if (!self->named_.insert(path).second) continue;
      Named named = self->index(path);
      if (named.module)
        modules.emplace_back(std::move(*named.module), named.sframe_bytes);
      else
        unlinked = unlinked || named.tables;
    }
  }
  for (const auto& [module, sframe_bytes] : modules)
    if (!self->hand_over(module, sframe_bytes, listener->debugger)) unlinked = true;
  if (unlinked) self->listen();
}

void ModuleServer::prepare(const std::string& path, lldb::user_id_t debugger) {
  Named named;
  {
    std::lock_guard lock(mutex_);
    if (!named_.insert(path).second) return;  // seen as it loaded, or prepared already
    named = index(path);
  }
  if (named.module ? !hand_over(std::move(*named.module), named.sframe_bytes, debugger)
                   : named.tables)
    listen();  // LLDB will ask for it
}

ModuleServer::Named ModuleServer::index(const std::string& path) {
  const std::optional<TableFile> table = table_file(path);
  if (!table) return {};
  std::vector<std::string> notes;  // files that are no modules: nothing to report
  index_.add_file(path, notes);
  const server::IndexedModule* module = index_.find(table->build_id);
  if (module == nullptr || module->path != path || !enabled_ || paused_ > 0) return {true, {}, 0};
  return {true, *module, table->sframe_bytes};
}

bool ModuleServer::hand_over(server::IndexedModule module, uint64_t sframe_bytes,
                             lldb::user_id_t debugger_id) {
  // The file is put where LLDB's download cache looks before it asks a server: LLDB opens it
  // where it lies instead of fetching it (a side file of a 1,000,000-function module is tens
  // of MB: most of a second over HTTP, then written again into LLDB's cache). A link to the
  // kept file, not a copy. LLDB waits for its module's debug file either way, so a file no
  // session made yet is made here, on LLDB's loading thread, as the request would have made
  // it. Were LLDB to name its cache files otherwise, it would ask the server as before.
  // With no folder to keep it in, the request makes it (once: LLDB asks once per module).
  if (!cache_.has_folder()) return false;
  const debuginfo::FallbackNames names = lldb_names();
  // A module no session indexed (its hash not remembered) is hashed only when its file is
  // keyed by the hash: not for a large module's quick file, unless an analyzed file of its
  // build-id is kept (one of this content, perhaps).
  const bool large = sframe_bytes > wait_limit_;
  if (module.content_hash.empty() && (!large || cache_.may_hold(module, names))) {
    std::lock_guard lock(mutex_);
    const server::IndexedModule* hashed = index_.hashed(module.build_id);
    if (hashed == nullptr) return false;  // changed since it was indexed
    module = *hashed;
  }
  std::optional<std::filesystem::path> kept =
      module.content_hash.empty() ? std::nullopt : cache_.stored(module, names);
  // A module whose analyzed file would keep LLDB waiting gets the quick one (made in about a
  // twentieth of the time), and its analyzed one is made for later sessions.
  const bool quick = !kept && large;
  const server::FileKind kind = quick ? server::FileKind::Quick : server::FileKind::Analyzed;
  if (quick) kept = cache_.stored(module, names, kind);
  if (!kept) {
    // LLDB's loading thread waits for this (a 1 M-function module's file takes a second or
    // more, its quick file a twentieth of that): the prompt's status line and lldb-dap's client
    // say why.
    const std::string name = std::filesystem::path(module.path).filename().string();
    lldb::SBDebugger debugger =
        lldb::SBDebugger::FindDebuggerWithID(static_cast<int>(debugger_id));
    std::optional<Progress> progress;
    if (debugger.IsValid())
      progress.emplace("unwindkit: making unwind info", name.c_str(), debugger);
    server::CacheSource source = server::CacheSource::Made;
    const server::CachedFile made = cache_.get(module, source, names, kind);
    kept = cache_.stored(module, names, kind);
    // No file for this content (its own CFI describes every function, say): nothing for
    // LLDB to ask the server for, nor an analyzed file to make for later sessions unless the
    // quick file's checks left tables out.
    if (!kept && !made.bytes && made.lasting) {
      if (quick && made.left_out()) make_analyzed_later(module);
      std::lock_guard lock(mutex_);
      no_file_[module.build_id] = made.note;
      return true;
    }
  }
  if (quick) make_analyzed_later(module);
  if (!kept) return false;
  auto linked = [&] {
    std::lock_guard lock(mutex_);
    linked_.insert(module.build_id);
    if (quick) quick_.insert(module.build_id);
    return true;
  };
  std::filesystem::path link = client_cache_ / (kClientCachePrefix + module.build_id);
  std::error_code ec;
  if (!lldb_reads_served_files() && module.build_id.size() > 2) {
    link = client_cache_ / kBuildIdFolder / module.build_id.substr(0, 2) /
           (module.build_id.substr(2) + kBuildIdSuffix);
    std::filesystem::create_directories(link.parent_path(), ec);
  }
  if (std::filesystem::exists(link, ec)) return linked();
  std::filesystem::create_hard_link(*kept, link, ec);
  if (ec) std::filesystem::create_symlink(*kept, link, ec);  // the cache on another file system
  if (ec) return false;
  // Another session may have trimmed the folder between `stored` and the link: a symlink to
  // nothing would leave LLDB with no file and no request.
  if (!std::filesystem::exists(link, ec)) {
    std::filesystem::remove(link, ec);
    return false;
  }
  return linked();
}

void ModuleServer::make_analyzed_later(const server::IndexedModule& module) {
  const std::optional<std::filesystem::path> dir = served_cache_dir();
  if (!dir) return;
  const auto lock_at =
      static_cast<uint32_t>(std::hash<std::string>{}(module.build_id) & kLockBytes);
  run_detached(*dir / kMakingLock, lock_at, [&module, &dir] {
    std::error_code ec;
    if (!std::filesystem::is_directory(*dir, ec)) return;  // removed since (a test's folder)
    server::DebugFileCache cache(dir, served_options(), served_limits());
    // Hashed here, off LLDB's path, and remembered: later sessions find the file by it.
    const std::optional<server::IndexedModule> hashed =
        server::with_content_hash(module, index_options().memo_dir);
    const debuginfo::FallbackNames names = lldb_names();
    if (hashed && !cache.stored(*hashed, names)) {  // else made already
      server::CacheSource source = server::CacheSource::Made;
      cache.get(*hashed, source, names);
    }
    // Later sessions take the analyzed file.
    cache.remove(module, names, server::FileKind::Quick);
  });
}

std::optional<server::IndexedModule> ModuleServer::find(std::string_view build_id) {
  if (!enabled_ || paused_ > 0) return std::nullopt;
  std::lock_guard lock(mutex_);
  // LLDB has this module's file from its cache already (hand_over). What it asks for now is a
  // split-DWARF package for the file's DWARF unit (LLDB caches the answer as
  // `llvmcache-ID-ID.dwp`): there is none. Answered, it cost a read of the whole file (a
  // 1 M-function module's: 37 MB) or, for a module given its quick file, the analyzed one made
  // while LLDB waits.
  if (linked_.contains(std::string(build_id))) return std::nullopt;
  if (const server::IndexedModule* module = index_.find(build_id)) return *module;
  return std::nullopt;
}

bool ModuleServer::served(lldb::SBModule module) const {
  const std::string symbols = file_path(module.GetSymbolFileSpec());
  const std::string dir = client_cache_.string() + "/";
  return symbols.compare(0, dir.size(), dir) == 0;
}

}  // namespace unwindkit::lldb_plugin
