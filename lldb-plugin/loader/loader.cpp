// What `plugin load libunwindkit-lldb.so` loads: a loader that works in every LLDB the
// plugin was built for, and newer ones, with no liblldb of its own.
//
// Why: each LLDB is its own liblldb (liblldb-19.so.1, liblldb-22.so.1, ...), and a plugin that
// names one in DT_NEEDED drags that second copy into any other LLDB. The SB API is
// ABI-stable, so the plugin proper (libunwindkit-lldb-sb-N.so, one per LLDB N of the release,
// built against N's headers) names no liblldb: its SB symbols bind to whichever liblldb the
// process already runs. The loader asks that liblldb its version and opens the newest build
// it can take. A Python script or lldb-dap may hold the liblldb with RTLD_LOCAL, where a later
// dlopen cannot see it, so the loader first makes it global (RTLD_NOLOAD | RTLD_GLOBAL), then
// opens the plugin proper beside itself with every symbol bound at once (RTLD_NOW: a symbol
// this LLDB lacks is a load error, not a crash later) and hands it the debugger. It calls no
// SB API but the version string; the debugger argument is passed through untouched.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// lldb::PluginInitialize(lldb::SBDebugger) and lldb::SBDebugger::GetVersionString(), as the
// Itanium C++ ABI names them.
constexpr const char* kInitializeSymbol = "_ZN4lldb16PluginInitializeENS_10SBDebuggerE";
constexpr const char* kVersionSymbol = "_ZN4lldb10SBDebugger16GetVersionStringEv";
// The LLDB versions the plugin proper was built for (lldb-plugin/CMakeLists.txt), ascending.
constexpr int kBuiltFor[] = {UNWINDKIT_LLDB_API_VERSIONS};

// SBDebugger holds a shared_ptr, so it is not trivially copyable and the Itanium C++ ABI
// (x86_64, AArch64) passes it by address: a caller-owned temporary the callee neither copies
// nor destroys. Forwarding that address passes the same argument on.
using Initialize = bool (*)(void* debugger);

void say(const std::string& text) { std::fprintf(stderr, "unwindkit: %s\n", text.c_str()); }

// The path of the liblldb this process runs: the loaded object that defines the SB API's
// version function. Its file name says nothing sure: Python's `lldb` module is liblldb itself
// under the name _lldb.cpython-*.so.
std::string loaded_liblldb() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (!info->dlpi_name || !*info->dlpi_name) return 0;  // the program itself
        void* object = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
        void* symbol = object ? dlsym(object, kVersionSymbol) : nullptr;
        Dl_info where{};
        if (object) dlclose(object);
        if (!symbol || !dladdr(symbol, &where) || !where.dli_fname) return 0;
        *static_cast<std::string*>(data) = where.dli_fname;  // the object defining it
        return 1;
      },
      &found);
  return found;
}

// "lldb version 19.1.7 (...)" -> 19; 0 if the text has no version.
int major_of(const char* version) {
  if (!version) return 0;
  const char* digits = std::strpbrk(version, "0123456789");
  return digits ? std::atoi(digits) : 0;
}

std::string own_folder() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&own_folder), &info) || !info.dli_fname) return ".";
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

extern "C" bool unwindkit_lldb_initialize(void* debugger) __asm__(
    "_ZN4lldb16PluginInitializeENS_10SBDebuggerE");

extern "C" bool unwindkit_lldb_initialize(void* debugger) {
  const std::string liblldb = loaded_liblldb();
  void* lldb = liblldb.empty() ? nullptr
                               : dlopen(liblldb.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (!lldb) {
    say("no liblldb is loaded in this process: load the plugin from LLDB");
    return false;
  }
  using Version = const char* (*)();
  const auto version = reinterpret_cast<Version>(dlsym(lldb, kVersionSymbol));
  const int major = major_of(version ? version() : nullptr);
  int chosen = 0;
  for (int built : kBuiltFor)
    if (built <= major && built > chosen) chosen = built;
  if (!chosen) {
    std::string built;
    for (int v : kBuiltFor) built += (built.empty() ? "" : ", ") + std::to_string(v);
    say("this LLDB (" + std::to_string(major) + ") is older than every LLDB the plugin was " +
        "built for (" + built + ")");
    return false;
  }
  const std::string path =
      own_folder() + "/libunwindkit-lldb-sb-" + std::to_string(chosen) + ".so";
  void* plugin = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    say(std::string("cannot load the plugin for LLDB ") + std::to_string(major) + ": " +
        dlerror());
    return false;
  }
  const auto initialize = reinterpret_cast<Initialize>(dlsym(plugin, kInitializeSymbol));
  if (!initialize) {
    say(path + " has no " + kInitializeSymbol);
    return false;
  }
  return initialize(debugger);
}
