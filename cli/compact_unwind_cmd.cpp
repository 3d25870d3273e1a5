// `unwindkit compact-unwind dump|lookup|check FILE`: Apple compact unwind in Mach-O files.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/report.h"
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
  const auto report = cu::dump_report(o.file, slices, o.json, o.decoded);
  if (report.complete || !o.json) std::fputs(report.out.c_str(), stdout);
  for (const auto& p : report.problems) std::fprintf(stderr, "unwindkit: %s\n", p.c_str());
  return report.problems.empty() ? kExitOk : kExitDataProblem;
}

int run_lookup(const Options& o) {
  int rc = kExitOk;
  uint64_t pc = 0;
  parse_address(o.address, pc);  // already checked by the validator
  std::unique_ptr<macho::MachOFile> file;
  std::vector<const macho::Slice*> slices;
  if (!load(o, false, file, slices, rc)) return rc;
  auto report = cu::lookup_report(*slices.front(), pc);
  if (!report) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", o.file.c_str(), report.error().to_string().c_str());
    return kExitDataProblem;
  }
  if (!*report) {
    std::fprintf(stderr, "unwindkit: %s: no compact unwind entry covers %#llx\n", o.file.c_str(),
                 static_cast<unsigned long long>(pc));
    return kExitDataProblem;
  }
  std::fputs(o.json ? cu::lookup_json(**report).c_str() : cu::lookup_text(**report).c_str(),
             stdout);
  return (*report)->ok ? kExitOk : kExitDataProblem;
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
