#include "unwindkit/sframe/report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

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

json row_json(const Section& s, size_t fde, size_t fre_index) {
  const Fde& f = s.fdes[fde];
  const Fre& fre = f.fres[fre_index];
  const auto words = s.fre_words(fre);
  json r{{"start_offset", fre.start_offset},
         {"info", fre.info},
         {"words", std::vector<int32_t>(words.begin(), words.end())},
         {"ra_mangled", fre.ra_mangled()}};
  if (!f.pcmask()) r["address"] = f.func_start + fre.start_offset;
  auto row = interpret(s, fde, fre_index);
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

json function_json(const Section& s, size_t i) {
  const Fde& f = s.fdes[i];
  const uint8_t version = s.header.version;
  json rows = json::array();
  for (size_t j = 0; j < f.fres.size(); ++j) rows.push_back(row_json(s, i, j));
  json fj{{"index", i},
          {"start", f.func_start},
          {"size", f.size},
          {"end", f.func_end()},
          {"start_field_value", f.start_value},
          {"info", f.info},
          {"fre_type", f.fre_type()},
          {"pcmask", f.pcmask()},
          {"rep_size", f.pcmask() ? s.rep_size(f) : f.rep_size},
          {"pauth_key", s.is_aarch64() && f.pauth_key_b() ? "B" : "A"},
          {"signal", f.signal(version)},
          {"flexible", f.flex(version)},
          {"rows", std::move(rows)}};
  if (version == kVersion3) fj["info2"] = f.info2;
  return fj;
}

json section_json(const FileTable& t) {
  json out{{"schema", "unwindkit-sframe-dump/1"}, {"file", t.file}};
  if (t.section == nullptr) {
    out["error"] = table_problem(t.problem, kSectionName);
    return out;
  }
  const Section& s = *t.section;
  const Header& h = s.header;
  json flags = json::array();
  if ((h.flags & kFlagFdeSorted) != 0) flags.push_back("FDE_SORTED");
  if ((h.flags & kFlagFramePointer) != 0) flags.push_back("FRAME_POINTER");
  if ((h.flags & kFlagFdeFuncStartPcrel) != 0) flags.push_back("FDE_FUNC_START_PCREL");
  out["section"] = {{"name", h.section_name()}, {"address", s.address}, {"size", t.size}};
  out["header"] = {{"format", h.info().title},
                   {"version", h.version},
                   {"flags", h.flags},
                   {"flag_names", flags},
                   {"abi_arch", h.abi_arch},
                   {"abi", abi_name(h.abi_arch)},
                   {"endian", s.endian == Endian::Little ? "little" : "big"},
                   {"cfa_fixed_fp_offset", h.cfa_fixed_fp_offset},
                   {"cfa_fixed_ra_offset", h.cfa_fixed_ra_offset},
                   {"auxhdr_len", h.auxhdr_len},
                   {"num_fdes", h.num_fdes},
                   {"num_fres", h.num_fres},
                   {"fre_len", h.fre_len},
                   {"fdeoff", h.fdeoff},
                   {"freoff", h.freoff}};
  json functions = json::array();
  for (size_t i = 0; i < s.fdes.size(); ++i) functions.push_back(function_json(s, i));
  out["functions"] = std::move(functions);
  return out;
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

}  // namespace

std::string dump_text(const std::vector<FileTable>& files) {
  return dump_files(files, kSectionName, [](const FileTable& t) { return dump(*t.section); });
}

std::string dump_json(const FileTable& file) { return section_json(file).dump(2) + "\n"; }

std::string dump_json(const std::vector<FileTable>& files) {
  json out = json::array();
  for (const FileTable& t : files) out.push_back(section_json(t));
  return out.dump(2) + "\n";
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
