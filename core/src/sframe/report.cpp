#include "unwindkit/sframe/report.h"

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>

#include "read.h"
#include "unwindkit/file_report.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/row.h"

namespace unwindkit::sframe {

namespace {

using nlohmann::json;

const char* abi_name(uint8_t abi) {
  switch (abi) {
    case kAbiAArch64Big: return "aarch64-be";
    case kAbiAArch64Little: return "aarch64-le";
    case kAbiAmd64Little: return "amd64";
    case kAbiS390xBig: return "s390x";
    default: return "unknown";
  }
}

const char* slot_kind(Slot::Kind k) {
  switch (k) {
    case Slot::Kind::Absent: return "absent";
    case Slot::Kind::Padding: return "padding";
    case Slot::Kind::Fixed: return "fixed";
    case Slot::Kind::AtCfa: return "at_cfa";
    case Slot::Kind::InReg: return "in_reg";
    case Slot::Kind::AtReg: return "at_reg";
  }
  return "absent";
}

json slot_json(const Slot& s) {
  json j{{"kind", slot_kind(s.kind)}};
  if (s.kind == Slot::Kind::InReg || s.kind == Slot::Kind::AtReg) j["reg"] = s.reg;
  if (s.kind != Slot::Kind::Absent && s.kind != Slot::Kind::Padding) j["offset"] = s.offset;
  return j;
}

// One function with its rows and their data words: the decoded section's, or read straight
// from the bytes one function at a time (a row's first_word counts from the start of `words`).
struct FunctionParts {
  size_t index;
  const Fde& fde;
  std::span<const Fre> rows;
  std::span<const int32_t> words;
};

json row_json(const Header& h, const FunctionParts& f, size_t fre_index) {
  const Fre& fre = f.rows[fre_index];
  const auto words = f.words.subspan(fre.first_word, fre.word_count());
  json r{{"start_offset", fre.start_offset},
         {"info", fre.info},
         {"words", std::vector<int32_t>(words.begin(), words.end())},
         {"ra_mangled", fre.ra_mangled()}};
  if (!f.fde.pcmask()) r["address"] = f.fde.func_start + fre.start_offset;
  auto row = detail::interpret_words(h, f.fde.flex(h.version), f.fde.fre_type(), fre, words,
                                     f.index, fre_index);
  if (!row) {
    r["error"] = row.error().to_string();
  } else if (row->ra_undefined) {
    r["ra_undefined"] = true;
  } else {
    r["ra_undefined"] = false;
    r["cfa"] = {{"kind", row->cfa.kind == Slot::Kind::AtReg ? "deref_reg_offset" : "reg_offset"},
                {"reg", row->cfa.reg},
                {"offset", row->cfa.offset}};
    r["ra"] = slot_json(row->ra);
    r["fp"] = slot_json(row->fp);
  }
  return r;
}

json function_json(const Header& h, const FunctionParts& f) {
  const Fde& fde = f.fde;
  const bool aarch64 = h.abi_arch == kAbiAArch64Big || h.abi_arch == kAbiAArch64Little;
  json rows = json::array();
  for (size_t j = 0; j < f.rows.size(); ++j) rows.push_back(row_json(h, f, j));
  json fj{{"index", f.index},
          {"start", fde.func_start},
          {"size", fde.size},
          {"end", fde.func_end()},
          {"start_field_value", fde.start_value},
          {"info", fde.info},
          {"fre_type", fde.fre_type()},
          {"pcmask", fde.pcmask()},
          {"rep_size", fde.pcmask() ? rep_size(h, fde) : fde.rep_size},
          {"pauth_key", aarch64 && fde.pauth_key_b() ? "B" : "A"},
          {"signal", fde.signal(h.version)},
          {"flexible", fde.flex(h.version)},
          {"rows", std::move(rows)}};
  if (h.version == kVersion3) fj["info2"] = fde.info2;
  return fj;
}

// The document without its functions ("functions": [], filled by the caller).
json document_head(const std::string& file, const Header& h, Endian endian, uint64_t address,
                   size_t size) {
  json out{{"schema", "unwindkit-sframe-dump/1"}, {"file", file}};
  json flags = json::array();
  if ((h.flags & kFlagFdeSorted) != 0) flags.push_back("FDE_SORTED");
  if ((h.flags & kFlagFramePointer) != 0) flags.push_back("FRAME_POINTER");
  if ((h.flags & kFlagFdeFuncStartPcrel) != 0) flags.push_back("FDE_FUNC_START_PCREL");
  out["section"] = {{"name", h.section_name()}, {"address", address}, {"size", size}};
  out["header"] = {{"format", h.info().title},
                   {"version", h.version},
                   {"flags", h.flags},
                   {"flag_names", flags},
                   {"abi_arch", h.abi_arch},
                   {"abi", abi_name(h.abi_arch)},
                   {"endian", endian == Endian::Little ? "little" : "big"},
                   {"cfa_fixed_fp_offset", h.cfa_fixed_fp_offset},
                   {"cfa_fixed_ra_offset", h.cfa_fixed_ra_offset},
                   {"auxhdr_len", h.auxhdr_len},
                   {"num_fdes", h.num_fdes},
                   {"num_fres", h.num_fres},
                   {"fre_len", h.fre_len},
                   {"fdeoff", h.fdeoff},
                   {"freoff", h.freoff}};
  out["functions"] = json::array();
  return out;
}

json section_json(const FileTable& t) {
  if (t.section == nullptr)
    return {{"schema", "unwindkit-sframe-dump/1"},
            {"file", t.file},
            {"error", table_problem(t.problem, kSectionName)}};
  const Section& s = *t.section;
  json out = document_head(t.file, s.header, s.endian, s.address, t.size);
  json& functions = out["functions"];
  for (size_t i = 0; i < s.fdes.size(); ++i)
    functions.push_back(function_json(s.header, {i, s.fdes[i], s.fdes[i].fres, s.words}));
  return out;
}

// Writes `text` with `indent` spaces after each of its newlines: the rest of a line the
// output has begun, where a whole document would have printed it.
void append_continued(std::string& out, std::string_view text, size_t indent) {
  for (const char c : text) {
    out.push_back(c);
    if (c == '\n') out.append(indent, ' ');
  }
}

// Writes `text` after `indent` spaces, each of its lines indented as much: a document's part
// dumped alone, where the whole document would have printed it.
void append_indented(std::string& out, std::string_view text, size_t indent) {
  out.append(indent, ' ');
  append_continued(out, text, indent);
}

const char* cfa_kind(CfaRule::Kind k) {
  return k == CfaRule::Kind::DerefRegOffset ? "deref_reg_offset" : "reg_offset";
}

const char* reg_kind(RegRule::Kind k) {
  switch (k) {
    case RegRule::Kind::Unchanged: return "unchanged";
    case RegRule::Kind::Undefined: return "undefined";
    case RegRule::Kind::AtCfa: return "at_cfa";
    case RegRule::Kind::ValCfa: return "val_cfa";
    case RegRule::Kind::InReg: return "in_reg";
    case RegRule::Kind::AtReg: return "at_reg";
  }
  return "unchanged";
}

json reg_rule_json(const RegRule& r) {
  json j{{"kind", reg_kind(r.kind)}};
  if (r.uses_register()) j["reg"] = r.reg;
  if (r.kind != RegRule::Kind::Unchanged && r.kind != RegRule::Kind::Undefined)
    j["offset"] = r.offset;
  return j;
}

json rule_json(const UnwindRule& r) {
  return {{"arch", arch_name(r.arch)},
          {"source", source_name(r.source)},
          {"func_start", r.func_start},
          {"func_end", r.func_end},
          {"cfa", {{"kind", cfa_kind(r.cfa.kind)}, {"reg", r.cfa.reg}, {"offset", r.cfa.offset}}},
          {"ra", reg_rule_json(r.ra)},
          {"fp", reg_rule_json(r.fp)},
          {"sp_from_cfa", r.sp_from_cfa},
          {"outermost", r.outermost()},
          {"ra_mangled", r.ra_mangled},
          {"pauth_key", r.pauth_key == PauthKey::B ? "B" : "A"},
          {"signal_frame", r.signal_frame},
          {"text", describe(r)}};
}

// One file's document as dump_json(file, bytes, ...) prints it, each line after `indent`
// spaces (an element of an array), without the final newline.
Result<void> stream_document(const std::string& file, Bytes bytes, uint64_t section_address,
                             Format format, size_t indent, const Sink& sink) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const auto whole = [](size_t, const Fde&, const std::vector<Fre>&,
                        const std::vector<int32_t>&) {};
  if (auto read = detail::for_each_function(*layout, section_address, format, whole); !read)
    return tl::unexpected(read.error());  // read whole first, as decode() reads it
  const Header& h = layout->header;
  // The document as nlohmann's dump(2) prints it, its functions array (at two spaces, its
  // elements at four) written one function at a time.
  const std::string head =
      document_head(file, h, layout->section.endian(), section_address, bytes.size()).dump(2);
  constexpr std::string_view kEmpty = "\n  \"functions\": []";  // no string holds a newline
  const size_t at = head.find(kEmpty) + kEmpty.size() - 2;
  std::string out;
  append_indented(out, std::string_view(head).substr(0, at), indent);
  out += h.num_fdes == 0 ? "[]" : "[";
  constexpr size_t kPiece = size_t{64} << 10;
  auto read = detail::for_each_function(
      *layout, section_address, format,
      [&](size_t i, const Fde& fde, const std::vector<Fre>& rows,
          const std::vector<int32_t>& words) {
        out += i == 0 ? "\n" : ",\n";
        append_indented(out, function_json(h, {i, fde, rows, words}).dump(2), indent + 4);
        if (out.size() >= kPiece) {
          sink(out);
          out.clear();
        }
      });
  if (!read) return tl::unexpected(read.error());  // never: the first reading passed
  if (h.num_fdes != 0) {
    out += "\n";
    out.append(indent + 2, ' ');
    out += "]";
  }
  append_continued(out, std::string_view(head).substr(at + 2), indent);
  sink(out);
  return {};
}

// Streams `f` with `stream` where it has a section; the problem to print instead where it has
// none or its section is refused (before any of it was streamed).
template <class Stream>
std::optional<std::string> streamed(const FileSection& f, Stream stream) {
  if (!f.bytes) return f.problem;
  if (auto done = stream(); !done) return done.error().to_string();
  return std::nullopt;
}

}  // namespace

std::string dump_json(const FileTable& file) { return section_json(file).dump(2) + "\n"; }

Result<void> dump_json(const std::string& file, Bytes bytes, uint64_t section_address,
                       Format format, const Sink& sink) {
  auto done = stream_document(file, bytes, section_address, format, 0, sink);
  if (done) sink("\n");
  return done;
}

void dump_text(const std::vector<FileSection>& files, const Sink& sink) {
  stream_file_texts(files, sink, [&](const FileSection& f) {
    if (auto problem = streamed(f, [&] { return dump(*f.bytes, f.address, f.format, sink); }))
      sink(no_table_text(f.file, *problem, kSectionName));
  });
}

void dump_json(const std::vector<FileSection>& files, const Sink& sink) {
  // As nlohmann's dump(2) prints an array of the documents: each at two spaces.
  if (files.empty()) return sink("[]\n");
  for (size_t i = 0; i < files.size(); ++i) {
    const FileSection& f = files[i];
    sink(i == 0 ? "[\n" : ",\n");
    if (auto problem = streamed(
            f, [&] { return stream_document(f.file, *f.bytes, f.address, f.format, 2, sink); })) {
      std::string doc;
      append_indented(doc, section_json({f.file, nullptr, *problem, 0}).dump(2), 2);
      sink(doc);
    }
  }
  sink("\n]\n");
}

std::string lookup_text(std::string_view file, uint64_t pc, uint64_t shift,
                        const Result<std::optional<UnwindRule>>& rule) {
  if (!rule) return table_error_text(pc, file, rule.error());
  if (!*rule) return fmt::format("{:#x}: {}: no SFrame row covers this address\n", pc, file);
  const UnwindRule& r = **rule;
  return fmt::format("{:#x}: {}: function [{:#x}, {:#x}): {}\n", pc, file, r.func_start + shift,
                     r.func_end + shift, describe(r));
}

std::string lookup_json(uint64_t pc, const std::optional<UnwindRule>& rule) {
  json j{{"pc", pc}, {"found", rule.has_value()}};
  if (rule) j["rule"] = rule_json(*rule);
  return j.dump(2) + "\n";
}

std::string check_text(std::string_view file, const std::vector<Error>& problems,
                       Format format) {
  std::string out;
  for (const Error& e : problems) out += fmt::format("{}: {}\n", file, e.to_string());
  if (problems.empty()) return fmt::format("{}: {} OK\n", file, format_info(format).section_name);
  return out + fmt::format("{}: {} problem{}\n", file, problems.size(),
                           problems.size() == 1 ? "" : "s");
}

}  // namespace unwindkit::sframe
