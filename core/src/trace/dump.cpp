#include "unwindkit/trace/dump.h"

#include <fmt/format.h>

#include "unwindkit/trace/constants.h"

namespace unwindkit::trace {
namespace {

// Intel's names for the record tags (llvm/BinaryFormat/Traceback.h).
const char* tag_name(const Record& r) {
  switch (r.kind) {
    case RecordKind::Header: return "TB_TAG_Module";
    case RecordKind::Routine: return r.tag == kTagRoutine64 ? "TB_TAG_RTN64" : "TB_TAG_RTN32";
    case RecordKind::File: return "TB_TAG_File";
    case RecordKind::Line:
      return r.tag == kTagLine1 ? "TB_TAG_LN1" : r.tag == kTagLine2 ? "TB_TAG_LN2" : "TB_TAG_LN4";
    case RecordKind::Pc:
      return r.tag == kTagPc1 ? "TB_TAG_PC1" : r.tag == kTagPc2 ? "TB_TAG_PC2" : "TB_TAG_PC4";
    case RecordKind::Co1: return "TB_TAG_CO1";
    case RecordKind::Co2: return "TB_TAG_CO2";
    case RecordKind::Padding: return "Align";
  }
  return "?";
}

// Names come from the section's bytes: control bytes (a NUL among them) and non-ASCII are
// written as \uXXXX, so the text stays printable and a NUL cannot cut it short (GDB's
// gdb.write refuses strings holding one).
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

std::string quoted(const std::string& s) { return "\"" + escaped(s) + "\""; }

// The routine the PC belongs to, as llvm-objdump prints it: "main+0", "main+0xf".
std::string pc_text(const Section& s, uint32_t module, uint64_t pc, uint32_t routine) {
  if (module == kNone || routine == kNone) return fmt::format("{:#x}", pc);
  const Routine& r = s.modules[module].routines[routine];
  const uint64_t off = pc - r.start;
  return off == 0 ? escaped(r.name) + "+0" : fmt::format("{}+{:#x}", escaped(r.name), off);
}

constexpr size_t kBytesPerLine = 16;
constexpr std::string_view kIndent = "          ";  // under "OOOOOOOO: "

}  // namespace

std::string dump_records(const Section& section, Bytes bytes) {
  std::string s = std::string(kDumpTitle) + "\n";
  uint32_t routine = kNone;
  for (const Record& r : section.records) {
    // Hex bytes, 16 per line; the tag comment on the first.
    for (uint64_t i = 0; i < r.size || i == 0; i += kBytesPerLine) {
      std::string hex;
      for (uint64_t j = i; j < r.size && j < i + kBytesPerLine && r.offset + j < bytes.size(); ++j)
        hex += fmt::format("{:02x} ", bytes[r.offset + j]);
      if (i == 0)
        s += fmt::format("{:08x}: {:<48} # {}\n", r.offset, hex, tag_name(r));
      else
        s += fmt::format("{}{}\n", kIndent, hex);
    }
    const auto note = [&](const std::string& text) { s += fmt::format("{}({})\n", kIndent, text); };
    switch (r.kind) {
      case RecordKind::Header: {
        const Module& m = section.modules[r.module];
        routine = kNone;
        note(fmt::format("version: {}.{}, size: {:#x}", m.major, m.minor, m.size));
        note(fmt::format("code: {:#x}, code size: {:#x}", m.code_begin, m.code_size));
        note("module name: " + quoted(m.name));
        for (size_t i = 0; i < m.files.size(); ++i)
          note(fmt::format("file {}: {}", i, quoted(m.files[i])));
        break;
      }
      case RecordKind::Routine:
        routine = r.routine;
        note("name: " + quoted(r.name));
        note(fmt::format("PC: {:#x}", r.start_pc));
        break;
      case RecordKind::File: {
        const Module& m = section.modules[r.module];
        note(fmt::format("file: {} {}", r.file_index,
                         r.file_index < m.files.size() ? quoted(m.files[r.file_index])
                                                       : std::string("(out of range)")));
        break;
      }
      case RecordKind::Line:
        note(fmt::format("line: {}, delta line: {}", r.line, r.line_delta));
        break;
      case RecordKind::Co1:
      case RecordKind::Co2:
        note(fmt::format("line: {}, delta line: {}", r.line, r.line_delta));
        [[fallthrough]];
      case RecordKind::Pc:
        note(fmt::format("PC: {}, delta PC: {:#x}", pc_text(section, r.module, r.pc, routine),
                         r.pc_delta));
        break;
      case RecordKind::Padding: break;
    }
  }
  return s;
}

std::string dump_lines(const Section& section) {
  std::string s = fmt::format("{:<24} {:<24} {:>6}  {}\n", "ROUTINE", "FILE", "LINE", "RANGE");
  for (const Row& row : section.rows) {
    const Module& m = section.modules[row.module];
    const std::string routine = row.routine == kNone ? "?" : escaped(m.routines[row.routine].name);
    const std::string file = row.file < m.files.size() ? escaped(m.files[row.file]) : "?";
    s += fmt::format("{:<24} {:<24} {:>6}  [{:#x}, {:#x})\n", routine, file, row.line, row.begin,
                     row.end);
  }
  return s;
}

std::string dump_json(const Section& section) {
  std::string s = fmt::format("{{\"pointer_size\":{},\"modules\":[", section.pointer_size);
  for (size_t i = 0; i < section.modules.size(); ++i) {
    const Module& m = section.modules[i];
    s += fmt::format(
        "{}{{\"offset\":{},\"size\":{},\"version\":\"{}.{}\",\"code_begin\":\"{:#x}\","
        "\"code_size\":{},\"name\":{},\"files\":[",
        i == 0 ? "" : ",", m.offset, m.size, m.major, m.minor, m.code_begin, m.code_size,
        quoted(m.name));
    for (size_t f = 0; f < m.files.size(); ++f) s += (f == 0 ? "" : ",") + quoted(m.files[f]);
    s += "],\"routines\":[";
    for (size_t r = 0; r < m.routines.size(); ++r)
      s += fmt::format("{}{{\"name\":{},\"start\":\"{:#x}\",\"offset\":{}}}", r == 0 ? "" : ",",
                       quoted(m.routines[r].name), m.routines[r].start, m.routines[r].offset);
    s += "]}";
  }
  s += "],\"rows\":[";
  for (size_t i = 0; i < section.rows.size(); ++i) {
    const Row& row = section.rows[i];
    const Module& m = section.modules[row.module];
    s += fmt::format(
        "{}{{\"begin\":\"{:#x}\",\"end\":\"{:#x}\",\"line\":{},\"file\":{},\"routine\":{},"
        "\"module\":{}}}",
        i == 0 ? "" : ",", row.begin, row.end, row.line,
        row.file < m.files.size() ? quoted(m.files[row.file]) : "null",
        row.routine == kNone ? "null" : quoted(m.routines[row.routine].name), row.module);
  }
  return s + "]}\n";
}

}  // namespace unwindkit::trace
