#include "prepared_modules.h"

#include <sys/stat.h>

#include <map>
#include <optional>
#include <tuple>

namespace unwindkit::gdb {
namespace {

// A file rewritten in place keeps its inode but not its change time.
using Identity = std::tuple<dev_t, ino_t, off_t, decltype(stat::st_ctim.tv_sec), long>;

std::optional<Identity> identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return Identity{st.st_dev, st.st_ino, st.st_size, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
}

struct Prepared {
  Identity identity;
  std::shared_ptr<unwind::Module> module;
};

// Called from Python only, under the GIL: one caller at a time.
std::map<std::string, Prepared>& prepared() {
  // Destroyed at exit, where a preparation still under way is waited for (at most its
  // remaining time): its threads read the Module's mapping.
  static std::map<std::string, Prepared> modules;
  return modules;
}

}  // namespace

void prepare_module(const std::string& path) {
  const auto id = identity(path);
  if (!id) return;
  auto module = std::make_shared<unwind::Module>(path, path, std::vector<unwind::Mapping>{});
  module->prepare_sframe();
  prepared().insert_or_assign(path, Prepared{*id, std::move(module)});
}

std::shared_ptr<unwind::Module> take_prepared(const std::string& path) {
  auto it = prepared().find(path);
  if (it == prepared().end()) return nullptr;
  Prepared kept = std::move(it->second);
  prepared().erase(it);
  if (identity(path) != kept.identity) return nullptr;
  return std::move(kept.module);
}

}  // namespace unwindkit::gdb
