// `unwindkit setup gdb|lldb [--remove]`: adds (or takes out) the one line that makes every
// session of a debugger load the plugin — `source …/unwindkit-gdb.py` in ~/.gdbinit,
// `plugin load …/libunwindkit-lldb.so` in ~/.lldbinit. The plugin is found from this binary's
// own folder: installed (bin/ beside share/ and lib/) or in the build tree (cli/ beside
// gdb-plugin/ and lldb-plugin/). Adding twice leaves one line; removing after adding gives
// back the file byte for byte.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "unwindkit/file_bytes.h"

namespace unwindkit::cli {

namespace {

namespace fs = std::filesystem;

struct Debugger {
  const char* name;
  const char* init_file;    // in $HOME
  const char* command;      // the init file's command, followed by the plugin's path
  const char* installed;    // the plugin's path from the installed binary's folder
  const char* build_tree;   // the plugin's path from the build tree's cli/ folder
};

constexpr Debugger kGdb{"gdb", ".gdbinit", "source ", UNWINDKIT_INSTALLED_GDB_PLUGIN,
                        UNWINDKIT_BUILD_GDB_PLUGIN};
constexpr Debugger kLldb{"lldb", ".lldbinit", "plugin load ", UNWINDKIT_INSTALLED_LLDB_PLUGIN,
                         UNWINDKIT_BUILD_LLDB_PLUGIN};

std::optional<fs::path> find_plugin(const Debugger& d) {
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return std::nullopt;
  for (const char* relative : {d.installed, d.build_tree}) {
    const fs::path candidate = (exe_dir / relative).lexically_normal();
    if (fs::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

// Where `text` holds `line` as a whole line: its offset, or npos.
size_t find_line(const std::string& text, const std::string& line) {
  for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1)) {
    const size_t end = at + line.size();
    if ((at == 0 || text[at - 1] == '\n') && (end == text.size() || text[end] == '\n'))
      return at;
  }
  return std::string::npos;
}

// A file that lacks a final newline gets one before the added line, and the added line then
// goes without one: "a" becomes "a\nLINE", "a\n" becomes "a\nLINE\n", so removal can tell
// the two apart and restore either exactly.
std::string with_line(const std::string& text, const std::string& line) {
  if (text.empty() || text.back() == '\n') return text + line + "\n";
  return text + "\n" + line;
}

std::string without_line(const std::string& text, const std::string& line, size_t at) {
  const size_t end = at + line.size();
  if (end < text.size()) return text.substr(0, at) + text.substr(end + 1);
  return text.substr(0, at == 0 ? 0 : at - 1);  // the last line, added without a newline
}

bool read_text(const fs::path& path, std::string& out) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return true;  // no file yet: empty
  auto bytes = read_file(path.string());
  if (!bytes) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(), bytes.error().message.c_str());
    return false;
  }
  out.assign(bytes->begin(), bytes->end());
  return true;
}

bool write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "unwindkit: %s: cannot write: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

int setup(const Debugger& d, bool remove) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    std::fprintf(stderr, "unwindkit: setup %s: HOME is not set\n", d.name);
    return kExitUsage;
  }
  const std::optional<fs::path> plugin = find_plugin(d);
  if (!plugin) {
    std::fprintf(stderr, "unwindkit: setup %s: no plugin beside this binary (looked for %s and %s)\n",
                 d.name, d.installed, d.build_tree);
    return kExitDataProblem;
  }
  const fs::path init = fs::path(home) / d.init_file;
  const std::string line = d.command + plugin->string();
  std::string text;
  if (!read_text(init, text)) return kExitDataProblem;
  const size_t at = find_line(text, line);
  if (remove) {
    if (at == std::string::npos) {
      std::printf("%s: unchanged, it has no line `%s`\n", init.c_str(), line.c_str());
      return kExitOk;
    }
    if (!write_text(init, without_line(text, line, at))) return kExitDataProblem;
    std::printf("%s: removed `%s`\n", init.c_str(), line.c_str());
    return kExitOk;
  }
  if (at != std::string::npos) {
    std::printf("%s: unchanged, it already has `%s`\n", init.c_str(), line.c_str());
    return kExitOk;
  }
  if (!write_text(init, with_line(text, line))) return kExitDataProblem;
  std::printf("%s: added `%s`\n", init.c_str(), line.c_str());
  return kExitOk;
}

}  // namespace

void add_setup_command(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("setup", "Make every GDB or LLDB session of this user load "
                                            "the plugin (a line in ~/.gdbinit or ~/.lldbinit)");
  group->require_subcommand(1);
  for (const Debugger* d : {&kGdb, &kLldb}) {
    auto remove = std::make_shared<bool>(false);
    auto* cmd = group->add_subcommand(
        d->name, std::string("Add the plugin's line to ~/") + d->init_file + " (once)");
    cmd->add_flag("--remove", *remove, "Take the line out again");
    cmd->callback([d, remove, &exit_code] { exit_code = setup(*d, *remove); });
  }
}

}  // namespace unwindkit::cli
