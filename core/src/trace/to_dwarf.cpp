// `.trace` as DWARF 4 (see to_dwarf.h). Constants are DWARF 4's (§7).
#include "unwindkit/trace/to_dwarf.h"

#include <algorithm>
#include <string_view>

namespace unwindkit::trace {
namespace {

constexpr uint8_t kTagCompileUnit = 0x11, kTagSubprogram = 0x2e;
constexpr uint8_t kAtName = 0x03, kAtStmtList = 0x10, kAtLowPc = 0x11, kAtHighPc = 0x12,
                  kAtExternal = 0x3f;
constexpr uint8_t kFormAddr = 0x01, kFormData8 = 0x07, kFormString = 0x08,
                  kFormSecOffset = 0x17, kFormFlagPresent = 0x19;
constexpr uint8_t kAbbrevUnit = 1, kAbbrevSubprogram = 2;
constexpr uint8_t kLnsCopy = 0x01, kLnsAdvanceLine = 0x03, kLnsSetFile = 0x04;
constexpr uint8_t kLneEndSequence = 0x01, kLneSetAddress = 0x02;
constexpr uint8_t kOpcodeBase = 13;
constexpr uint8_t kStandardOpcodeLengths[kOpcodeBase - 1] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};

class Out {
 public:
  explicit Out(Endian endian) : endian_(endian) {}
  std::vector<uint8_t>& bytes() { return bytes_; }
  size_t size() const { return bytes_.size(); }
  void u(uint64_t v, unsigned size) {
    for (unsigned i = 0; i < size; ++i) {
      unsigned shift = endian_ == Endian::Little ? 8 * i : 8 * (size - 1 - i);
      bytes_.push_back(static_cast<uint8_t>(v >> shift));
    }
  }
  void put(size_t at, uint64_t v, unsigned size) {
    for (unsigned i = 0; i < size; ++i) {
      unsigned shift = endian_ == Endian::Little ? 8 * i : 8 * (size - 1 - i);
      bytes_[at + i] = static_cast<uint8_t>(v >> shift);
    }
  }
  void uleb(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      bytes_.push_back(static_cast<uint8_t>(b | (v != 0 ? 0x80 : 0)));
    } while (v != 0);
  }
  void sleb(int64_t v) {
    bool more = true;
    while (more) {
      uint8_t b = v & 0x7f;
      v >>= 7;  // arithmetic shift
      more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
      bytes_.push_back(static_cast<uint8_t>(b | (more ? 0x80 : 0)));
    }
  }
  void str(std::string_view s) {
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    bytes_.push_back(0);
  }

 private:
  Endian endian_;
  std::vector<uint8_t> bytes_;
};

std::vector<uint8_t> abbreviations() {
  Out a(Endian::Little);  // ULEB128 only: byte order plays no part
  a.uleb(kAbbrevUnit);
  a.uleb(kTagCompileUnit);
  a.u(1, 1);  // DW_CHILDREN_yes
  for (auto [at, form] : {std::pair{kAtName, kFormString}, {kAtLowPc, kFormAddr},
                          {kAtHighPc, kFormData8}, {kAtStmtList, kFormSecOffset}}) {
    a.uleb(at);
    a.uleb(form);
  }
  a.u(0, 2);
  a.uleb(kAbbrevSubprogram);
  a.uleb(kTagSubprogram);
  a.u(0, 1);  // DW_CHILDREN_no
  for (auto [at, form] : {std::pair{kAtName, kFormString}, {kAtLowPc, kFormAddr},
                          {kAtHighPc, kFormData8}, {kAtExternal, kFormFlagPresent}}) {
    a.uleb(at);
    a.uleb(form);
  }
  a.u(0, 2);
  a.u(0, 1);  // end of the table
  return std::move(a.bytes());
}

// The module's rows in address order, without any that overlap an earlier one.
std::vector<const Row*> module_rows(const Section& section, uint32_t module) {
  std::vector<const Row*> rows;
  uint64_t covered = 0;
  for (const Row& r : section.rows) {
    if (r.module != module || r.end <= r.begin || r.line <= 0) continue;
    if (!rows.empty() && r.begin < covered) continue;
    rows.push_back(&r);
    covered = r.end;
  }
  return rows;
}

void line_program(Out& line, const Module& m, const std::vector<const Row*>& rows) {
  const size_t start = line.size();
  line.u(0, 4);  // unit_length, patched below
  line.u(4, 2);  // version
  const size_t header_length_at = line.size();
  line.u(0, 4);
  const size_t header_start = line.size();
  line.u(1, 1);  // minimum_instruction_length
  line.u(1, 1);  // maximum_operations_per_instruction
  line.u(1, 1);  // default_is_stmt
  line.u(static_cast<uint8_t>(-5), 1);  // line_base
  line.u(14, 1);                        // line_range
  line.u(kOpcodeBase, 1);
  for (uint8_t n : kStandardOpcodeLengths) line.u(n, 1);
  line.u(0, 1);  // no include_directories
  for (const std::string& f : m.files) {
    line.str(f.empty() ? "?" : f);
    line.uleb(0);  // directory: the compilation directory
    line.uleb(0);  // mtime
    line.uleb(0);  // length
  }
  if (m.files.empty()) {
    line.str("?");
    line.uleb(0);
    line.uleb(0);
    line.uleb(0);
  }
  line.u(0, 1);
  line.put(header_length_at, line.size() - header_start, 4);

  auto set_address = [&line](uint64_t addr) {
    line.u(0, 1);
    line.uleb(9);
    line.u(kLneSetAddress, 1);
    line.u(addr, 8);
  };
  auto end_sequence = [&](uint64_t addr) {
    set_address(addr);
    line.u(0, 1);
    line.uleb(1);
    line.u(kLneEndSequence, 1);
  };
  // Registers as a new sequence starts them: file 1, line 1.
  uint64_t file = 1;
  int64_t current = 1;
  uint64_t end = 0;
  bool open = false;
  for (const Row* r : rows) {
    if (open && r->begin != end) {
      end_sequence(end);
      file = 1;
      current = 1;
    }
    set_address(r->begin);
    if (r->file + 1 != file) {
      file = r->file + 1;
      line.u(kLnsSetFile, 1);
      line.uleb(file);
    }
    if (r->line != current) {
      line.u(kLnsAdvanceLine, 1);
      line.sleb(r->line - current);
      current = r->line;
    }
    line.u(kLnsCopy, 1);
    end = r->end;
    open = true;
  }
  if (open) end_sequence(end);
  line.put(start, line.size() - start - 4, 4);
}

void compile_unit(Out& info, const Module& m, const std::vector<const Row*>& rows,
                  uint32_t module, uint64_t stmt_list) {
  const size_t start = info.size();
  info.u(0, 4);  // unit_length, patched below
  info.u(4, 2);  // version
  info.u(0, 4);  // debug_abbrev_offset
  info.u(8, 1);  // address_size
  info.uleb(kAbbrevUnit);
  info.str(!m.name.empty() ? m.name : !m.files.empty() ? m.files[0] : "?");
  uint64_t low = m.code_begin, high = m.code_begin + m.code_size;
  for (const Row* r : rows) {
    low = std::min(low, r->begin);
    high = std::max(high, r->end);
  }
  info.u(low, 8);
  info.u(high - low, 8);
  info.u(stmt_list, 4);
  for (uint32_t i = 0; i < m.routines.size(); ++i) {
    const Routine& routine = m.routines[i];
    uint64_t routine_end = routine.start;
    for (const Row* r : rows)
      if (r->module == module && r->routine == i) routine_end = std::max(routine_end, r->end);
    if (routine_end == routine.start || routine.name.empty()) continue;
    info.uleb(kAbbrevSubprogram);
    info.str(routine.name);
    info.u(routine.start, 8);
    info.u(routine_end - routine.start, 8);
  }
  info.u(0, 1);  // end of the unit's children
  info.put(start, info.size() - start - 4, 4);
}

}  // namespace

DwarfLines to_dwarf(const Section& section, Endian endian) {
  DwarfLines out;
  out.debug_abbrev = abbreviations();
  Out info(endian), line(endian);
  for (uint32_t i = 0; i < section.modules.size(); ++i) {
    const auto rows = module_rows(section, i);
    if (rows.empty()) continue;
    const uint64_t stmt_list = line.size();
    line_program(line, section.modules[i], rows);
    compile_unit(info, section.modules[i], rows, i, stmt_list);
  }
  out.debug_info = std::move(info.bytes());
  out.debug_line = std::move(line.bytes());
  return out;
}

}  // namespace unwindkit::trace
