// `unwindkit compact-unwind dump|lookup|check FILE`: Apple compact unwind in Mach-O files.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>

#include "commands.h"
#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/dump.h"
#include "unwindkit/compact_unwind/encoding.h"
#include "unwindkit/compact_unwind/lookup.h"
#include "unwindkit/compact_unwind/tables.h"
#include "unwindkit/macho/macho_file.h"

namespace unwindkit::cli {

namespace {

namespace cu = unwindkit::compact_unwind;

struct Options {
  std::string file;
  std::string arch;
  std::string address;
  bool json = false;
  bool decoded = false;
};

// Loads FILE and picks the slices to work on: --arch's, or every slice of a fat file
// (`all_slices`), or the only one. Returns false after printing the problem.
bool load(const Options& o, bool all_slices, std::unique_ptr<macho::MachOFile>& file,
          std::vector<const macho::Slice*>& slices, int& exit_code) {
  std::vector<uint8_t> bytes;
  if (!read_whole_file(o.file, bytes)) {
    exit_code = kExitDataProblem;
    return false;
  }
  auto f = macho::MachOFile::parse(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)));
  if (!f) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", o.file.c_str(), f.error().to_string().c_str());
    exit_code = kExitDataProblem;
    return false;
  }
  file = std::make_unique<macho::MachOFile>(std::move(*f));
  if (o.arch.empty() && all_slices) {
    for (const auto& s : file->slices()) slices.push_back(&s);
    return true;
  }
  auto s = file->select(o.arch);
  if (!s) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", o.file.c_str(), s.error().message.c_str());
    exit_code = o.arch.empty() ? kExitUsage : kExitDataProblem;
    return false;
  }
  slices.push_back(*s);
  return true;
}

int run_dump(const Options& o) {
  int rc = kExitOk;
  std::unique_ptr<macho::MachOFile> file;
  std::vector<const macho::Slice*> slices;
  if (!load(o, true, file, slices, rc)) return rc;
  nlohmann::json json = {{"file", o.file}, {"slices", nlohmann::json::array()}};
  for (const auto* s : slices) {
    auto t = cu::decode_slice(*s);
    if (!t) {
      std::fprintf(stderr, "unwindkit: %s: %s\n", o.file.c_str(), t.error().to_string().c_str());
      return kExitDataProblem;
    }
    if (t->tables.empty()) {
      std::fprintf(stderr, "unwindkit: %s: no __unwind_info or __compact_unwind section (%s)\n",
                   o.file.c_str(), macho::cpu_name(s->cputype()).c_str());
      rc = kExitDataProblem;
      continue;
    }
    if (o.json) {
      json["slices"].push_back(nlohmann::json::parse(cu::tables_json(*t)));
      continue;
    }
    // llvm-objdump prints one slice, bare; several slices need a line saying which is which.
    if (slices.size() > 1)
      std::printf("%s (architecture %s):\n", o.file.c_str(), macho::cpu_name(s->cputype()).c_str());
    std::fputs(cu::dump_tables(*t, o.decoded).c_str(), stdout);
  }
  if (o.json) std::printf("%s\n", json.dump().c_str());
  return rc;
}

// The entry covering `pc` in the slice's __unwind_info, or in its objects' entries.
Result<std::optional<cu::Entry>> find_entry(const cu::SliceTables& t, uint64_t pc) {
  for (const auto& table : t.tables) {
    if (const auto* info = std::get_if<cu::UnwindInfo>(&table)) {
      auto e = cu::lookup(*info, t.image_base, pc);
      if (!e || *e) return e;
      continue;
    }
    for (const auto& oe : std::get<std::vector<cu::ObjectEntry>>(table))
      if (pc >= oe.function && pc - oe.function < oe.length)
        return cu::Entry{oe.function, oe.function + oe.length, oe.encoding, {}, {}};
  }
  return std::nullopt;
}

int run_lookup(const Options& o) {
  int rc = kExitOk;
  uint64_t pc = 0;
  parse_address(o.address, pc);  // already checked by the validator
  std::unique_ptr<macho::MachOFile> file;
  std::vector<const macho::Slice*> slices;
  if (!load(o, false, file, slices, rc)) return rc;
  const macho::Slice& slice = *slices.front();
  auto t = cu::decode_slice(slice);
  if (!t) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", o.file.c_str(), t.error().to_string().c_str());
    return kExitDataProblem;
  }
  auto entry = find_entry(*t, pc);
  if (!entry) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", o.file.c_str(), entry.error().to_string().c_str());
    return kExitDataProblem;
  }
  if (!*entry) {
    std::fprintf(stderr, "unwindkit: %s: no compact unwind entry covers %#llx\n", o.file.c_str(),
                 static_cast<unsigned long long>(pc));
    return kExitDataProblem;
  }
  const cu::Entry& e = **entry;
  const Bytes code = slice.bytes_at_address(e.function_start, e.function_end - e.function_start);
  auto lowered = cu::lower(t->arch, e, code);
  auto decoded = cu::decode_encoding(t->arch, e.encoding);
  std::string rule_text;
  std::string kind;
  if (lowered) {
    switch (lowered->kind) {
      case cu::Lowered::Kind::Rule:
        kind = "rule";
        rule_text = describe(lowered->rule);
        break;
      case cu::Lowered::Kind::UseDwarf:
        kind = "dwarf";
        rule_text = fmt::format("use DWARF CFI, hint __eh_frame offset {:#x}",
                                lowered->dwarf_offset);
        break;
      case cu::Lowered::Kind::NoInfo:
        kind = "none";
        rule_text = "no information here (encoding 0): fall back to another source";
        break;
    }
  } else {
    kind = "error";
    rule_text = lowered.error().to_string();
    rc = kExitDataProblem;
  }
  if (o.json) {
    nlohmann::json j = {{"pc", pc},
                        {"function_start", e.function_start},
                        {"function_end", e.function_end},
                        {"encoding", e.encoding},
                        {"mode", cu::mode_name(t->arch, decoded ? decoded->mode : 0)},
                        {"result", kind},
                        {"rule", rule_text},
                        {"personality", nullptr},
                        {"lsda", nullptr},
                        {"ra_mangled", lowered && lowered->rule.ra_mangled}};
    if (e.personality) j["personality"] = *e.personality;
    if (e.lsda) j["lsda"] = *e.lsda;
    std::printf("%s\n", j.dump().c_str());
    return rc;
  }
  std::printf("function: %#llx-%#llx\n", static_cast<unsigned long long>(e.function_start),
              static_cast<unsigned long long>(e.function_end));
  std::printf("encoding: 0x%08x %s\n", e.encoding,
              decoded ? cu::describe_encoding(*decoded).c_str()
                      : ("invalid: " + decoded.error().message).c_str());
  if (e.personality) std::printf("personality: %#x\n", *e.personality);
  if (e.lsda) std::printf("lsda: %#x\n", *e.lsda);
  std::printf("%s: %s\n", kind.c_str(), rule_text.c_str());
  if (lowered && lowered->rule.ra_mangled) std::printf("return address: PAC-signed\n");
  return rc;
}

int run_check(const Options& o) {
  int rc = kExitOk;
  std::unique_ptr<macho::MachOFile> file;
  std::vector<const macho::Slice*> slices;
  if (!load(o, true, file, slices, rc)) return rc;
  size_t problems = 0, tables = 0;
  for (const auto* s : slices) {
    const auto arch = s->arch();
    if (!arch) continue;
    for (const auto& sect : s->sections()) {
      std::vector<Error> errors;
      if (sect.sectname == cu::kUnwindInfoSection)
        errors = cu::validate_unwind_info(sect.data, *arch);
      else if (sect.sectname == cu::kCompactUnwindSection)
        errors = cu::validate_object_section(*s, sect);
      else
        continue;
      ++tables;
      for (const auto& e : errors)
        std::printf("%s: %s: %s\n", o.file.c_str(), macho::cpu_name(s->cputype()).c_str(),
                    e.to_string().c_str());
      problems += errors.size();
    }
  }
  if (tables == 0) {
    std::fprintf(stderr, "unwindkit: %s: no __unwind_info or __compact_unwind section\n",
                 o.file.c_str());
    return kExitDataProblem;
  }
  if (problems == 0) std::printf("%s: ok (%zu table%s)\n", o.file.c_str(), tables,
                                 tables == 1 ? "" : "s");
  return problems ? kExitDataProblem : kExitOk;
}

}  // namespace

void add_compact_unwind_commands(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("compact-unwind", "Apple compact unwind (__unwind_info, "
                                                     "__compact_unwind) in Mach-O files");
  group->require_subcommand(1);
  auto opts = std::make_shared<Options>();
  auto common = [opts](CLI::App* c) {
    c->add_option("FILE", opts->file, "Mach-O file (thin or universal)")->required();
    c->add_option("--arch", opts->arch, "architecture slice of a universal file (x86_64, arm64, "
                                        "i386)");
    c->add_flag("--json", opts->json, "JSON output (docs/compact-unwind-json.md)");
  };
  auto* dump = group->add_subcommand("dump", "print the tables as llvm-objdump --unwind-info");
  common(dump);
  dump->add_flag("--decoded", opts->decoded, "also spell out every encoding");
  dump->callback([opts, &exit_code] { exit_code = run_dump(*opts); });

  auto* lookup = group->add_subcommand("lookup", "the entry and unwind rule for an address");
  common(lookup);
  lookup->add_option("ADDR", opts->address, "address (0x... or decimal)")
      ->required()
      ->check(address_validator());
  lookup->callback([opts, &exit_code] { exit_code = run_lookup(*opts); });

  auto* check = group->add_subcommand("check", "validate the tables, listing every problem");
  common(check);
  check->callback([opts, &exit_code] { exit_code = run_check(*opts); });
}

}  // namespace unwindkit::cli
