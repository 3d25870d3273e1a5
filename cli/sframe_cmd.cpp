// `unwindkit sframe dump|lookup|check`: the SFrame section of an ELF file (`.sframe`, or CTF
// Frame's `.ctf_frame`), or a raw section image with --raw, as readelf-identical text or JSON
// (docs/sframe-json.md), the rule at one address, and the strict checks (every problem, exit 1
// if any).
#include <elf.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/file_report.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/report.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace unwindkit::cli {

namespace {

struct Input {
  std::string path;
  bool raw = false;
  std::string section_address = "0";
  std::string format;  // --raw: "sframe" or "ctf-frame"; empty: what the bytes say
};

// The section bytes and where they live; keeps the ELF image (or raw file) alive.
struct Loaded {
  std::optional<elf::ElfFile> elf;
  std::vector<uint8_t> raw_bytes;
  Bytes bytes;
  uint64_t address = 0;
  sframe::Format format = sframe::Format::SFrame;
  std::vector<sframe::AddressRange> text;  // executable sections of a linked ELF
};

void print_problem(const Input& in, const Error& e) {
  std::fprintf(stderr, "unwindkit: %s: %s\n", in.path.c_str(), e.to_string().c_str());
}

std::optional<Loaded> load(const Input& in) {
  Loaded l;
  if (in.raw) {
    if (!read_whole_file(in.path, l.raw_bytes)) return std::nullopt;
    l.bytes = l.raw_bytes;
    parse_address(in.section_address, l.address);  // validated by CLI11
    l.format = in.format.empty()          ? sframe::detect_format(l.bytes)
               : in.format == "ctf-frame" ? sframe::Format::CtfFrame
                                          : sframe::Format::SFrame;
    return l;
  }
  auto f = elf::ElfFile::map(in.path);
  if (!f) {
    print_problem(in, f.error());
    return std::nullopt;
  }
  l.elf = std::move(*f);
  const auto found = sframe::find_section(*l.elf);
  if (!found) {
    std::fprintf(stderr, "unwindkit: %s", no_table_text(in.path, {}, sframe::kSectionName).c_str());
    return std::nullopt;
  }
  auto bytes = sframe::section_bytes(*l.elf, *found);
  if (!bytes) {
    print_problem(in, bytes.error());
    return std::nullopt;
  }
  l.bytes = *bytes;
  l.address = found->section->addr;
  l.format = found->format;
  // Unrelocated objects have no addresses to check functions against.
  if (l.elf->type() != elf::kTypeRel)
    for (const elf::Section& sec : l.elf->sections())
      if ((sec.flags & SHF_EXECINSTR) != 0 && sec.size != 0)
        l.text.push_back({sec.addr, sec.addr + sec.size});
  return l;
}

void add_input_options(CLI::App* cmd, Input& in) {
  cmd->add_option("FILE", in.path, "ELF file (exe, .so, .o; ELF32/64, either byte order)")
      ->required();
  CLI::Option* raw = cmd->add_flag(
      "--raw", in.raw, "FILE is a bare .sframe (or .ctf_frame) section image");
  cmd->add_option("--section-address", in.section_address,
                  "address of the raw section (default 0)")
      ->check(address_validator())
      ->needs(raw);
  cmd->add_option("--format", in.format,
                  "what the raw section is (default: what its header says; CTF Frame and "
                  "SFrame v1 share magic and version)")
      ->check(CLI::IsMember({"sframe", "ctf-frame"}))
      ->needs(raw);
}

int run_dump(const Input& in, bool as_json) {
  auto loaded = load(in);
  if (!loaded) return kExitDataProblem;
  // Streamed from the bytes: the same text as sframe::dump_text (or dump_json), without the
  // decoded section.
  if (auto done = as_json ? sframe::dump_json(in.path, loaded->bytes, loaded->address,
                                              loaded->format, write_stdout)
                          : sframe::dump(loaded->bytes, loaded->address, loaded->format,
                                         write_stdout);
      !done) {
    print_problem(in, done.error());
    return kExitDataProblem;
  }
  return kExitOk;
}

int run_lookup(const Input& in, const std::string& addr_text, bool as_json) {
  uint64_t pc = 0;
  parse_address(addr_text, pc);  // validated by CLI11
  auto l = load(in);
  if (!l) return kExitDataProblem;
  // The plugins' lookup structure, with decode()'s checks and Errors: the decoded section took
  // the 1,000,000-function module's one lookup 0.62 s and 181 MB.
  auto index = sframe::Index::build(l->bytes, l->address, l->format);
  if (!index) {
    print_problem(in, index.error());
    return kExitDataProblem;
  }
  auto rule = index->lookup(pc);
  const std::string text = sframe::lookup_text(in.path, pc, 0, rule);
  if (!as_json)
    write_stdout(text);
  else if (rule)
    write_stdout(sframe::lookup_json(pc, *rule));
  else
    std::fputs(text.c_str(), stderr);  // a table that cannot be read has no JSON answer
  return rule && rule->has_value() ? kExitOk : kExitDataProblem;
}

int run_check(const Input& in) {
  auto l = load(in);
  if (!l) return kExitDataProblem;
  const auto problems = sframe::validate(l->bytes, l->address, l->text, l->format);
  write_stdout(sframe::check_text(in.path, problems, l->format));
  return problems.empty() ? kExitOk : kExitDataProblem;
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
  auto registers = std::make_shared<bool>(false);
  CLI::Option* registers_flag = check->add_flag(
      "--registers", *registers,
      "Instead: per function, the callee-saved registers the prologue analyzer proves at its "
      "call sites, and why not the rest");
  check->add_flag("--json", check_opts->json, "JSON output (with --registers)")->needs(registers_flag);
  check->callback([check_opts, registers, &exit_code] {
    exit_code = *registers ? run_check_registers(check_opts->in.path, check_opts->json)
                           : run_check(check_opts->in);
  });
}

}  // namespace unwindkit::cli
