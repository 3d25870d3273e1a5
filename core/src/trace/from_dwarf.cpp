// Why link-time addresses, also for PIE: a `.trace` start PC is "relocated like a pointer",
// which in a PIE needs an R_*_RELATIVE dynamic relocation that a section added after linking
// cannot get. So the section holds the addresses the file's own DWARF and symbols hold; a
// reader adds the module's load bias, exactly as it does for DWARF.
#include "unwindkit/trace/from_dwarf.h"

#include <elf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>

#include "unwindkit/elf/elf_file.h"

namespace unwindkit::trace {
namespace {

struct Span {
  uint64_t begin, end;
  int64_t line;
  std::string file;  // basename
};

std::string basename_of(const char* path) {
  const std::string s = path == nullptr ? "" : path;
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

// The ranges of one compile unit's line program: row i covers [addr_i, addr_i+1) unless it
// ends a sequence; empty ranges (several rows at one address: the last one wins) and line 0
// are dropped.
std::vector<Span> cu_spans(Dwarf_Die* cu) {
  std::vector<Span> out;
  Dwarf_Lines* lines = nullptr;
  size_t n = 0;
  if (dwarf_getsrclines(cu, &lines, &n) != 0) return out;
  for (size_t i = 0; i + 1 < n; ++i) {
    Dwarf_Line* l = dwarf_onesrcline(lines, i);
    Dwarf_Line* next = dwarf_onesrcline(lines, i + 1);
    bool end = false;
    Dwarf_Addr a = 0, b = 0;
    int line = 0;
    if (l == nullptr || next == nullptr || dwarf_lineendsequence(l, &end) != 0 || end ||
        dwarf_lineaddr(l, &a) != 0 || dwarf_lineaddr(next, &b) != 0 ||
        dwarf_lineno(l, &line) != 0 || b <= a || line <= 0)
      continue;
    out.push_back(Span{a, b, line, basename_of(dwarf_linesrc(l, nullptr, nullptr))});
  }
  std::sort(out.begin(), out.end(), [](const Span& x, const Span& y) { return x.begin < y.begin; });
  return out;
}

struct DwarfCloser {
  void operator()(Dwarf* d) const { dwarf_end(d); }
};

}  // namespace

Result<std::vector<ModuleLines>> lines_from_dwarf(const std::string& path) {
  auto elf = elf::ElfFile::open(path);
  if (!elf) return tl::unexpected(elf.error());
  auto symbols = elf->symbols();
  if (!symbols) return tl::unexpected(symbols.error());
  // Function symbols by address; aliases at one address keep the first name.
  std::map<uint64_t, elf::Symbol> funcs;
  for (const auto& s : *symbols)
    if (s.type == STT_FUNC && s.size > 0 && s.shndx != 0) funcs.emplace(s.value, s);

  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fail(path, 0, "open", "cannot open");
  std::unique_ptr<Dwarf, DwarfCloser> dw(dwarf_begin(fd, DWARF_C_READ));
  if (!dw) {
    ::close(fd);
    return fail(path, 0, ".debug_info", "no DWARF (build with -g)");
  }
  std::vector<ModuleLines> modules;
  Dwarf_Off off = 0, next = 0;
  size_t header_size = 0;
  while (dwarf_nextcu(dw.get(), off, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(dw.get(), off + header_size, &cu) != nullptr) {
      const std::vector<Span> spans = cu_spans(&cu);
      ModuleLines m;
      std::map<std::string, uint32_t> file_index;
      for (const auto& [start, sym] : funcs) {
        const uint64_t fend = start + sym.size;
        RoutineLines r{sym.name, {}};
        auto it = std::lower_bound(spans.begin(), spans.end(), start,
                                   [](const Span& s, uint64_t v) { return s.end <= v; });
        for (; it != spans.end() && it->begin < fend; ++it) {
          const uint64_t b = std::max(it->begin, start), e = std::min(it->end, fend);
          if (b >= e) continue;
          auto [fi, added] = file_index.emplace(it->file, static_cast<uint32_t>(m.files.size()));
          if (added) m.files.push_back(it->file);
          if (!r.lines.empty() && r.lines.back().end == b && r.lines.back().line == it->line &&
              r.lines.back().file == fi->second)
            r.lines.back().end = e;  // the same line continues
          else
            r.lines.push_back(LineEntry{b, e, fi->second, it->line});
        }
        if (!r.lines.empty()) m.routines.push_back(std::move(r));
      }
      if (!m.routines.empty()) {
        m.code_begin = m.routines.front().lines.front().begin;
        uint64_t end = 0;
        for (const auto& r : m.routines) end = std::max(end, r.lines.back().end);
        if (end - m.code_begin > UINT32_MAX)
          return fail(path, off, "code_size", "a compile unit spans more than 4 GiB");
        m.code_size = static_cast<uint32_t>(end - m.code_begin);
        modules.push_back(std::move(m));
      }
    }
    off = next;
  }
  dw.reset();
  ::close(fd);
  if (modules.empty()) return fail(path, 0, ".debug_line", "no line rows inside functions");
  return modules;
}

}  // namespace unwindkit::trace
