// Module tables and side files (see module_tables.h).
#include "module_tables.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cctype>
#include <fstream>

#include "lldb_compat.h"
#include "private_dir.h"
#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/server/folder_budget.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/elf_section.h"

namespace unwindkit::lldb_plugin {
namespace {

// Bumped whenever the side files' contents change, so stale cache entries are not reused.
constexpr int kSideFileFormat = 6;
// The side files the plugin installs itself (`target symbols add`, or a module made again
// where there is no server), kept between sessions, all modules together (the files LLDB
// fetches as modules load are kept apart: module_server.h).
constexpr uint64_t kSideFileBytes = uint64_t{256} << 20;

std::vector<uint8_t> section_bytes(lldb::SBSection section) {
  lldb::SBData data = section.GetSectionData();
  std::vector<uint8_t> bytes(data.GetByteSize());
  lldb::SBError error;
  if (!bytes.empty() && data.ReadRawData(error, 0, bytes.data(), bytes.size()) != bytes.size())
    bytes.clear();
  return bytes;
}

Result<std::filesystem::path> write_file(const std::filesystem::path& path,
                                         const std::vector<uint8_t>& bytes) {
  std::error_code ec;
  auto tmp = path;
  tmp += fmt::format(".tmp{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) return fail("side file", 0, path.string(), "cannot write");
  }
  std::filesystem::rename(tmp, path, ec);  // atomic: a concurrent reader never sees half a file
  if (ec) return fail("side file", 0, path.string(), ec.message());
  return path;
}

}  // namespace

std::string file_path(lldb::SBFileSpec file) {
  const char* dir = file.GetDirectory();
  const char* name = file.GetFilename();
  if (name == nullptr) return "";
  return dir ? std::string(dir) + "/" + name : std::string(name);
}

// `.trace` lies outside every PT_LOAD: it is read from the module's own file. LLDB's section
// list is no guide once a symbol file is attached (our side file: LLDB then drops a `.trace`
// that lies in no segment, and lists the side file's `.debug_info` as the module's).
// Mapped, not read: every module of a target comes here before each command that unwinds,
// and a large one (76 MB) read whole cost more than the command; only the headers' pages
// and `.trace`'s are touched, copied before the mapping goes.
void read_trace(lldb::SBModule module, ModuleTables& t) {
  if (auto file = elf::ElfFile::map(t.path)) {
    t.has_debug_info = file->section(".debug_info") != nullptr;
    const elf::Section* section = file->section(trace::kSectionName);
    if (section == nullptr) return;
    t.has_trace = true;
    auto bytes = trace::section_bytes(*file, *section);  // an object's: relocated
    if (!bytes) {
      t.trace_error = bytes.error();
      return;
    }
    t.trace_bytes.assign(bytes->begin(), bytes->end());
    if (t.trace_bytes.size() != section->size) {
      t.trace_error = Error{trace::kSectionName, 0, "section data", "the section has no bytes in the file"};
      return;
    }
  } else {
    t.has_debug_info = module.FindSection(".debug_info").IsValid();
    lldb::SBSection section = module.FindSection(trace::kSectionName);
    if (!section.IsValid()) return;
    t.has_trace = true;
    t.trace_bytes = section_bytes(section);
    if (t.trace_bytes.size() != section.GetByteSize()) {
      t.trace_error = Error{trace::kSectionName, 0, "section data", "LLDB could not read the section"};
      return;
    }
  }
  auto decoded = trace::decode(t.trace_bytes, module.GetAddressByteSize() == 4 ? 4 : 8);
  if (!decoded) {
    t.trace_error = decoded.error();
    return;
  }
  t.trace = std::move(*decoded);
}

ModuleTables read_module_tables(lldb::SBModule module) {
  ModuleTables t;
  t.path = file_path(module.GetFileSpec());
  if (const char* uuid = module.GetUUIDString()) {
    for (const char* p = uuid; *p; ++p)
      if (*p != '-') t.build_id += static_cast<char>(std::tolower(*p));
  }
  read_trace(module, t);
  t.module = std::make_shared<unwind::Module>(t.path, t.path, std::vector<unwind::Mapping>{});
  t.module->set_bias(0);
  return t;
}

std::filesystem::path side_file_path(const ModuleTables& tables,
                                     const std::filesystem::path& cache_dir, bool with_unwind) {
  return cache_dir / fmt::format("{}.v{}.{}.debug", tables.build_id, kSideFileFormat,
                                 with_unwind ? "sframe" : "plain");
}

Result<std::filesystem::path> side_file_for(const ModuleTables& tables,
                                            const std::filesystem::path& cache_dir,
                                            bool with_unwind) {
  if (tables.build_id.empty()) return fail("side file", 0, tables.path, "module has no build-id");
  if (!private_dir(cache_dir))
    return fail("side file", 0, cache_dir.string(), "not a folder of this user's alone");
  const auto path = side_file_path(tables, cache_dir, with_unwind);
  if (std::filesystem::exists(path)) {  // keyed by build-id: same module, same file
    server::mark_used(path);
    return path;
  }
  auto module = elf::ElfFile::open(tables.path);
  if (!module) return tl::unexpected(module.error());
  // Added to a module LLDB has made (`target symbols add`), or given to one it makes again
  // where there is no server (Installer::reload_unserved): `.debug_frame` and `.symtab`
  // names, which LLDB reads either way (SynthesizeOptions::lldb_loads_it). Analyzed: the
  // callee-saved registers of callers as the served file states them.
  auto file = debuginfo::synthesize(*module, {.fallback_names = lldb_names(),
                                              .unwind = with_unwind,
                                              .lldb_loads_it = false});
  if (!file) return tl::unexpected(file.error());
  if (file->bytes.empty()) return fail("side file", 0, tables.path, "nothing to add");
  auto written = write_file(path, file->bytes);
  if (written) server::trim_folder(cache_dir, kSideFileBytes, {".debug"}, path);
  return written;
}

}  // namespace unwindkit::lldb_plugin
