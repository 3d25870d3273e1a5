// Module tables and side files (see module_tables.h).
#include "module_tables.h"

#include <elf.h>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>

#include "unwindkit/dwarf/cfi_writer.h"
#include "unwindkit/elf/side_file.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"
#include "unwindkit/stepper.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/to_dwarf.h"

namespace unwindkit::lldb_plugin {
namespace {

// Bumped whenever the side files' contents change, so stale cache entries are not reused.
constexpr int kSideFileFormat = 4;
constexpr const char* kDisabledMarker = "__unwindkit_disabled";

std::vector<uint8_t> section_bytes(lldb::SBSection section) {
  lldb::SBData data = section.GetSectionData();
  std::vector<uint8_t> bytes(data.GetByteSize());
  lldb::SBError error;
  if (!bytes.empty() && data.ReadRawData(error, 0, bytes.data(), bytes.size()) != bytes.size())
    bytes.clear();
  return bytes;
}

// Leaf sections (LLDB nests ELF sections under their PT_LOAD segments).
void collect_sections(lldb::SBSection section, std::vector<lldb::SBSection>& out) {
  size_t n = section.GetNumSubSections();
  if (n == 0) {
    out.push_back(section);
    return;
  }
  for (size_t i = 0; i < n; ++i) collect_sections(section.GetSubSectionAtIndex(i), out);
}

std::vector<elf::SideFileSection> allocated_sections(lldb::SBModule module) {
  std::vector<lldb::SBSection> leaves;
  for (size_t i = 0; i < module.GetNumSections(); ++i)
    collect_sections(module.GetSectionAtIndex(i), leaves);
  std::vector<elf::SideFileSection> out;
  for (lldb::SBSection s : leaves) {
    const char* name = s.GetName();
    lldb::addr_t addr = s.GetFileAddress();
    if (name == nullptr || name[0] != '.' || addr == LLDB_INVALID_ADDRESS || addr == 0) continue;
    uint32_t perms = s.GetPermissions();
    uint64_t flags = SHF_ALLOC;
    if (perms & lldb::ePermissionsWritable) flags |= SHF_WRITE;
    if (perms & lldb::ePermissionsExecutable) flags |= SHF_EXECINSTR;
    out.push_back({name, flags, addr, s.GetByteSize(), std::max<uint64_t>(1, s.GetAlignment())});
  }
  return out;
}

// Function names LLDB already has for the module (its .dynsym on a stripped file).
std::map<uint64_t, std::string> code_symbols(lldb::SBModule module) {
  std::map<uint64_t, std::string> names;
  for (size_t i = 0; i < module.GetNumSymbols(); ++i) {
    lldb::SBSymbol sym = module.GetSymbolAtIndex(i);
    if (sym.GetType() != lldb::eSymbolTypeCode || sym.IsSynthetic() || sym.GetName() == nullptr)
      continue;
    names.emplace(sym.GetStartAddress().GetFileAddress(), sym.GetName());
  }
  return names;
}

// Every SFrame row as a CFI row. A PCMASK function (a PLT) repeats its rows every rep_size
// bytes; each repetition becomes rows of its own.
std::vector<dwarf::CfiFunction> cfi_functions(const sframe::Section& section) {
  std::vector<dwarf::CfiFunction> out;
  for (const sframe::Fde& fde : section.fdes) {
    dwarf::CfiFunction fn{fde.func_start, fde.func_end(), {}};
    uint32_t rep = fde.pcmask() ? section.rep_size(fde) : 0;
    uint32_t blocks = rep != 0 ? (fde.size + rep - 1) / rep : 1;
    for (uint32_t b = 0; b < blocks; ++b) {
      for (const sframe::Fre& fre : fde.fres) {
        uint64_t address = fde.func_start + uint64_t{b} * rep + fre.start_offset;
        auto rule = sframe::lookup(section, address);
        if (rule && *rule && address < fde.func_end()) fn.rows.push_back({address, **rule});
      }
    }
    if (!fn.rows.empty()) out.push_back(std::move(fn));
  }
  return out;
}

// The ELF entry point (_start) is where the process begins: nothing called it, so its return
// address is undefined and the walk ends there, as its own CFI (which strip removed) says.
// Assemblers emit no SFrame for it, so without this LLDB drops that last frame.
void add_entry_point(lldb::SBModule module, Arch arch,
                     const std::vector<elf::SideFileSection>& sections,
                     std::vector<dwarf::CfiFunction>& functions) {
  lldb::addr_t entry = module.GetObjectFileEntryPointAddress().GetFileAddress();
  if (entry == LLDB_INVALID_ADDRESS || entry == 0) return;
  uint64_t end = 0;
  for (const auto& s : sections)
    if ((s.flags & SHF_EXECINSTR) && entry >= s.addr && entry < s.addr + s.size) end = s.addr + s.size;
  if (end == 0) return;
  for (const auto& fn : functions) {
    if (entry >= fn.start && entry < fn.end) return;  // SFrame covers it: nothing to add
    if (fn.start > entry) end = std::min(end, fn.start);
  }
  // Where LLDB knows the function at the entry point (a symbol, or one it made from the
  // module's own .eh_frame), the rule covers that function only: in a static program libc
  // follows _start without SFrame, and an FDE stretching over it would end every walk there.
  lldb::SBSymbol symbol = module.ResolveSymbolContextForAddress(
      module.ResolveFileAddress(entry), lldb::eSymbolContextSymbol).GetSymbol();
  if (symbol.IsValid() && symbol.GetStartAddress().GetFileAddress() == entry) {
    lldb::addr_t symbol_end = symbol.GetEndAddress().GetFileAddress();
    if (symbol_end != LLDB_INVALID_ADDRESS && symbol_end > entry) end = std::min(end, symbol_end);
  }
  RegisterSet names(arch);
  UnwindRule rule;
  rule.arch = arch;
  // The CFA at entry: the stack pointer as the kernel left it (x86_64 CFI counts a
  // return-address slot, as for any function).
  rule.cfa = {CfaRule::Kind::RegOffset, names.sp_reg(),
              arch == Arch::X86_64 ? int64_t{arch_word_size(arch)} : 0};
  rule.ra = RegRule::undefined();
  rule.func_start = entry;
  rule.func_end = end;
  dwarf::CfiFunction fn{entry, end, {{entry, rule}}};
  functions.insert(std::upper_bound(functions.begin(), functions.end(), fn,
                                    [](const auto& a, const auto& b) { return a.start < b.start; }),
                   std::move(fn));
}

Result<std::filesystem::path> write_file(const std::filesystem::path& path,
                                         const std::vector<uint8_t>& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
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

std::vector<uint8_t> build_id_bytes(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// `.trace` lies outside every PT_LOAD: LLDB reads it from the file, as it does .sframe.
void read_trace(lldb::SBModule module, ModuleTables& t) {
  t.has_debug_info = module.FindSection(".debug_info").IsValid();
  lldb::SBSection section = module.FindSection(trace::kSectionName);
  if (!section.IsValid()) return;
  t.has_trace = true;
  t.trace_bytes = section_bytes(section);
  if (t.trace_bytes.size() != section.GetByteSize()) {
    t.trace_error = Error{trace::kSectionName, 0, "section data", "LLDB could not read the section"};
    return;
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
  lldb::SBSection section = module.FindSection(sframe::kSectionName);
  if (!section.IsValid()) return t;
  t.has_sframe = true;
  t.sframe_address = section.GetFileAddress();
  t.sframe_size = section.GetByteSize();
  const std::vector<uint8_t> bytes = section_bytes(section);
  if (bytes.size() != t.sframe_size) {
    t.error = Error{sframe::kSectionName, 0, "section data", "LLDB could not read the section"};
    return t;
  }
  auto decoded = sframe::decode(bytes, t.sframe_address);
  if (!decoded) {
    t.error = decoded.error();
    return t;
  }
  t.sframe = std::move(*decoded);
  std::vector<sframe::AddressRange> code;
  for (const auto& s : allocated_sections(module))
    if (s.flags & SHF_EXECINSTR) code.push_back({s.addr, s.addr + s.size});
  t.problems = sframe::validate(bytes, t.sframe_address, code);
  return t;
}

Result<std::filesystem::path> side_file_for(lldb::SBModule module, const ModuleTables& tables,
                                            const std::filesystem::path& cache_dir,
                                            bool with_unwind) {
  if (tables.build_id.empty()) return fail("side file", 0, tables.path, "module has no build-id");
  auto path = cache_dir / fmt::format("{}.v{}.{}.debug", tables.build_id, kSideFileFormat,
                                      with_unwind ? "sframe" : "plain");
  if (std::filesystem::exists(path)) return path;  // keyed by build-id: same module, same file

  elf::SideFileSpec spec;
  spec.machine = EM_X86_64;
  if (const char* triple = module.GetTriple(); triple && std::string_view(triple).starts_with("aarch64"))
    spec.machine = EM_AARCH64;
  else if (triple && std::string_view(triple).starts_with("s390x"))
    spec.machine = EM_S390;
  spec.type = module.GetObjectFileHeaderAddress().GetFileAddress() == 0 ? ET_DYN : ET_EXEC;
  spec.endian = module.GetByteOrder() == lldb::eByteOrderBig ? Endian::Big : Endian::Little;
  spec.build_id = build_id_bytes(tables.build_id);
  spec.sections = allocated_sections(module);
  std::map<uint64_t, elf::SideFileSymbol> routines;  // by start: .trace's names win
  if (trace_lines(tables)) {
    for (const auto& m : tables.trace->modules)
      for (const auto& r : m.routines)
        if (!r.name.empty()) routines.emplace(r.start, elf::SideFileSymbol{r.name, r.start, 0});
    for (const auto& row : tables.trace->rows) {
      if (row.routine == trace::kNone) continue;
      const auto& r = tables.trace->modules[row.module].routines[row.routine];
      auto it = routines.find(r.start);
      if (it != routines.end()) it->second.size = std::max(it->second.size, row.end - r.start);
    }
    auto dwarf = trace::to_dwarf(*tables.trace, spec.endian);
    spec.debug_sections = {{".debug_abbrev", std::move(dwarf.debug_abbrev)},
                           {".debug_info", std::move(dwarf.debug_info)},
                           {".debug_line", std::move(dwarf.debug_line)}};
  }
  if (with_unwind && usable(tables)) {
    auto functions = cfi_functions(*tables.sframe);
    add_entry_point(module, tables.sframe->arch(), spec.sections, functions);
    auto names = code_symbols(module);
    for (const auto& fn : functions) {
      if (routines.contains(fn.start)) continue;
      auto it = names.find(fn.start);
      std::string name = it != names.end() ? it->second : fmt::format("__unwindkit_fn_{:x}", fn.start);
      spec.functions.push_back({std::move(name), fn.start, fn.end - fn.start});
    }
    spec.debug_frame = dwarf::write_debug_frame(
        functions, {tables.sframe->arch(), tables.sframe->endian, 8});
  }
  for (auto& [start, symbol] : routines) spec.functions.push_back(std::move(symbol));
  if (spec.functions.empty()) {
    // LLDB refuses a symbol file with no symbols at all ("does not match any existing
    // module"): one absolute marker makes it acceptable without naming any code.
    spec.functions.push_back({kDisabledMarker, 0, 0});
  }
  return write_file(path, elf::write_side_file(spec));
}

}  // namespace unwindkit::lldb_plugin
