// `unwindkit sframe dump|lookup|check`: the SFrame section of an ELF file (or a raw section
// image with --raw) as readelf-identical text or JSON (docs/sframe-json.md), the rule at one
// address, and the strict checks (every problem, exit 1 if any).
#include <elf.h>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/row.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace unwindkit::cli {

namespace {

using nlohmann::json;

struct Input {
  std::string path;
  bool raw = false;
  std::string section_address = "0";
};

// The section bytes and where they live; keeps the ELF image (or raw file) alive.
struct Loaded {
  std::optional<elf::ElfFile> elf;
  std::vector<uint8_t> raw_bytes;
  Bytes bytes;
  uint64_t address = 0;
  std::vector<sframe::AddressRange> text;  // executable sections of a linked ELF
};

std::optional<Loaded> load(const Input& in) {
  Loaded l;
  if (in.raw) {
    if (!read_whole_file(in.path, l.raw_bytes)) return std::nullopt;
    l.bytes = l.raw_bytes;
    parse_address(in.section_address, l.address);  // validated by CLI11
    return l;
  }
  auto f = elf::ElfFile::map(in.path);
  if (!f) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", in.path.c_str(), f.error().to_string().c_str());
    return std::nullopt;
  }
  l.elf = std::move(*f);
  const elf::Section* s = l.elf->section(sframe::kSectionName);
  if (s == nullptr || s->type == elf::kSectionNoBits) {
    std::fprintf(stderr, "unwindkit: %s: no .sframe section\n", in.path.c_str());
    return std::nullopt;
  }
  l.bytes = s->data;
  l.address = s->addr;
  // Unrelocated objects have no addresses to check functions against.
  if (l.elf->type() != elf::kTypeRel)
    for (const elf::Section& sec : l.elf->sections())
      if ((sec.flags & SHF_EXECINSTR) != 0 && sec.size != 0)
        l.text.push_back({sec.addr, sec.addr + sec.size});
  return l;
}

std::optional<sframe::Section> load_decoded(const Input& in, Loaded& l) {
  auto loaded = load(in);
  if (!loaded) return std::nullopt;
  l = std::move(*loaded);
  auto s = sframe::decode(l.bytes, l.address);
  if (!s) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", in.path.c_str(), s.error().to_string().c_str());
    return std::nullopt;
  }
  return std::move(*s);
}

const char* abi_name(uint8_t abi) {
  switch (abi) {
    case sframe::kAbiAArch64Big: return "aarch64-be";
    case sframe::kAbiAArch64Little: return "aarch64-le";
    case sframe::kAbiAmd64Little: return "amd64";
    case sframe::kAbiS390xBig: return "s390x";
    default: return "unknown";
  }
}

const char* slot_kind(sframe::Slot::Kind k) {
  switch (k) {
    case sframe::Slot::Kind::Absent: return "absent";
    case sframe::Slot::Kind::Padding: return "padding";
    case sframe::Slot::Kind::Fixed: return "fixed";
    case sframe::Slot::Kind::AtCfa: return "at_cfa";
    case sframe::Slot::Kind::InReg: return "in_reg";
    case sframe::Slot::Kind::AtReg: return "at_reg";
  }
  return "absent";
}

json slot_json(const sframe::Slot& s) {
  json j{{"kind", slot_kind(s.kind)}};
  if (s.kind == sframe::Slot::Kind::InReg || s.kind == sframe::Slot::Kind::AtReg)
    j["reg"] = s.reg;
  if (s.kind != sframe::Slot::Kind::Absent && s.kind != sframe::Slot::Kind::Padding)
    j["offset"] = s.offset;
  return j;
}

json section_json(const sframe::Section& s, size_t size) {
  const sframe::Header& h = s.header;
  json flags = json::array();
  if ((h.flags & sframe::kFlagFdeSorted) != 0) flags.push_back("FDE_SORTED");
  if ((h.flags & sframe::kFlagFramePointer) != 0) flags.push_back("FRAME_POINTER");
  if ((h.flags & sframe::kFlagFdeFuncStartPcrel) != 0) flags.push_back("FDE_FUNC_START_PCREL");
  json out;
  out["schema"] = "unwindkit-sframe-dump/1";
  out["section"] = {{"name", sframe::kSectionName}, {"address", s.address}, {"size", size}};
  out["header"] = {{"version", h.version},
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
  for (size_t i = 0; i < s.fdes.size(); ++i) {
    const sframe::Fde& f = s.fdes[i];
    json rows = json::array();
    for (size_t j = 0; j < f.fres.size(); ++j) {
      const sframe::Fre& fre = f.fres[j];
      const auto words = s.fre_words(fre);
      json r{{"start_offset", fre.start_offset},
             {"info", fre.info},
             {"words", std::vector<int32_t>(words.begin(), words.end())},
             {"ra_mangled", fre.ra_mangled()}};
      if (!f.pcmask()) r["address"] = f.func_start + fre.start_offset;
      auto row = sframe::interpret(s, i, j);
      if (!row) {
        r["error"] = row.error().to_string();
      } else if (row->ra_undefined) {
        r["ra_undefined"] = true;
      } else {
        r["ra_undefined"] = false;
        r["cfa"] = {{"kind", row->cfa.kind == sframe::Slot::Kind::AtReg ? "deref_reg_offset"
                                                                         : "reg_offset"},
                    {"reg", row->cfa.reg},
                    {"offset", row->cfa.offset}};
        r["ra"] = slot_json(row->ra);
        r["fp"] = slot_json(row->fp);
      }
      rows.push_back(std::move(r));
    }
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
            {"signal", f.signal(h.version)},
            {"flexible", f.flex(h.version)},
            {"rows", std::move(rows)}};
    if (h.version == sframe::kVersion3) fj["info2"] = f.info2;
    functions.push_back(std::move(fj));
  }
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

void add_input_options(CLI::App* cmd, Input& in) {
  cmd->add_option("FILE", in.path, "ELF file (exe, .so, .o; ELF32/64, either byte order)")
      ->required();
  CLI::Option* raw = cmd->add_flag("--raw", in.raw, "FILE is a bare .sframe section image");
  cmd->add_option("--section-address", in.section_address,
                  "address of the raw section (default 0)")
      ->check(address_validator())
      ->needs(raw);
}

int run_dump(const Input& in, bool as_json) {
  Loaded l;
  auto s = load_decoded(in, l);
  if (!s) return kExitDataProblem;
  if (as_json)
    std::fputs((section_json(*s, l.bytes.size()).dump(2) + "\n").c_str(), stdout);
  else
    sframe::dump(*s, write_stdout);
  return kExitOk;
}

int run_lookup(const Input& in, const std::string& addr_text, bool as_json) {
  uint64_t pc = 0;
  parse_address(addr_text, pc);  // validated by CLI11
  Loaded l;
  auto s = load_decoded(in, l);
  if (!s) return kExitDataProblem;
  auto rule = sframe::lookup(*s, pc);
  if (!rule) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", in.path.c_str(), rule.error().to_string().c_str());
    return kExitDataProblem;
  }
  if (as_json) {
    json j{{"pc", pc}, {"found", rule->has_value()}};
    if (rule->has_value()) j["rule"] = rule_json(**rule);
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  } else if (rule->has_value()) {
    const UnwindRule& r = **rule;
    fmt::print("{:#x}: function [{:#x}, {:#x}): {}\n", pc, r.func_start, r.func_end, describe(r));
  } else {
    fmt::print("{:#x}: no SFrame row covers this address\n", pc);
  }
  return rule->has_value() ? kExitOk : kExitDataProblem;
}

int run_check(const Input& in) {
  auto l = load(in);
  if (!l) return kExitDataProblem;
  const auto problems = sframe::validate(l->bytes, l->address, l->text);
  for (const Error& e : problems) fmt::print("{}: {}\n", in.path, e.to_string());
  if (!problems.empty()) {
    fmt::print("{}: {} problem{}\n", in.path, problems.size(), problems.size() == 1 ? "" : "s");
    return kExitDataProblem;
  }
  fmt::print("{}: .sframe OK\n", in.path);
  return kExitOk;
}

}  // namespace

void add_sframe_commands(CLI::App& app, int& exit_code) {
  CLI::App* group = app.add_subcommand("sframe", "SFrame sections: dump, lookup, check");
  group->require_subcommand(1);

  struct Options {
    Input in;
    bool json = false;
    std::string addr;
  };
  // Shared by the callbacks, which run after app.parse() while `app` is alive.
  auto dump_opts = std::make_shared<Options>();
  CLI::App* dump = group->add_subcommand(
      "dump", "Print the section like `readelf --sframe` (or as JSON: docs/sframe-json.md)");
  add_input_options(dump, dump_opts->in);
  dump->add_flag("--json", dump_opts->json, "JSON output");
  dump->callback([dump_opts, &exit_code] { exit_code = run_dump(dump_opts->in, dump_opts->json); });

  auto lookup_opts = std::make_shared<Options>();
  CLI::App* lookup = group->add_subcommand(
      "lookup", "Print the unwind rule at ADDR (exit 1 when no function covers it)");
  add_input_options(lookup, lookup_opts->in);
  lookup->add_option("ADDR", lookup_opts->addr, "address (0x... or decimal)")
      ->required()
      ->check(address_validator());
  lookup->add_flag("--json", lookup_opts->json, "JSON output");
  lookup->callback([lookup_opts, &exit_code] {
    exit_code = run_lookup(lookup_opts->in, lookup_opts->addr, lookup_opts->json);
  });

  auto check_opts = std::make_shared<Options>();
  CLI::App* check = group->add_subcommand(
      "check", "Strict checks of the section; prints every problem, exit 1 if any");
  add_input_options(check, check_opts->in);
  check->callback([check_opts, &exit_code] { exit_code = run_check(check_opts->in); });
}

}  // namespace unwindkit::cli
