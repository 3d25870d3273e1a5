// `unwindkit sframe build IN -o OUT [--version 1|2|3] [--pcrel] [--verbose]`: a copy of an ELF
// file with a new .sframe made from its DWARF CFI (sframe/from_cfi.h), loaded in a PT_LOAD of
// its own and named by PT_GNU_SFRAME (elf/segment_add.h), so that the kernel, glibc and
// profilers find it as they find gas's. Function starts are computed for where the section
// lands. Functions SFrame cannot express are skipped and counted on stderr.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "commands.h"
#include "unwindkit/elf/constants.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/elf/segment_add.h"
#include "unwindkit/sframe/encode.h"
#include "unwindkit/sframe/from_cfi.h"
#include "unwindkit/sframe/validate.h"

namespace unwindkit::cli {

namespace {

struct BuildArgs {
  std::string in;
  std::string out;
  int version = sframe::kVersion3;
  bool pcrel = false;
  bool verbose = false;
};

int report(const std::string& path, const Error& e) {
  std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(), e.to_string().c_str());
  return kExitDataProblem;
}

// Skipped functions by reason field, so the summary says why without listing every one.
void print_skipped(const std::string& path, const sframe::CfiConversion& c, bool verbose) {
  std::map<std::string, size_t> by_field;
  for (const sframe::SkippedFunction& s : c.skipped) {
    ++by_field[s.reason.section + " " + s.reason.field];
    if (verbose)
      std::fprintf(stderr, "unwindkit: %s: skipped [%#llx, %#llx): %s\n", path.c_str(),
                   static_cast<unsigned long long>(s.start),
                   static_cast<unsigned long long>(s.end), s.reason.to_string().c_str());
  }
  std::string why;
  for (const auto& [field, n] : by_field) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, field);
  std::fprintf(stderr, "unwindkit: %s: %zu functions in the CFI, %zu written (%zu flexible), %zu skipped%s\n",
               path.c_str(), c.functions, c.section.fdes.size(), c.flex, c.skipped.size(),
               why.empty() ? "" : fmt::format(" ({}{})", why, verbose ? "" : "; --verbose lists them").c_str());
}

int run_build(const BuildArgs& a) {
  auto file = elf::ElfFile::map(a.in);  // the copy is written from the mapped bytes
  if (!file) return report(a.in, file.error());
  auto plan = elf::plan_loaded_section(*file, elf::kSegmentGnuSFrame);
  if (!plan) return report(a.in, plan.error());
  const auto version = static_cast<uint8_t>(a.version);
  auto conv = sframe::from_cfi(*file, version);
  if (!conv) return report(a.in, conv.error());
  print_skipped(a.in, *conv, a.verbose);
  const sframe::EncodeOptions options{version, a.pcrel, plan->address};
  auto bytes = sframe::encode(conv->section, options);
  if (!bytes) return report(a.in, bytes.error());
  // What we write must pass the checks we apply to what others write.
  const auto problems = sframe::validate(*bytes, plan->address);
  if (!problems.empty()) return report(a.out, problems.front());
  auto image = elf::add_loaded_section(*file, *plan, sframe::kSectionName, elf::kSegmentGnuSFrame,
                                       *bytes);
  if (!image) return report(a.in, image.error());
  if (!write_copy(a.in, a.out, *image)) return kExitDataProblem;
  fmt::print("{}: .sframe v{}{} at {:#x} ({} bytes, {} functions) in a new PT_LOAD at {:#x}\n",
             a.out, a.version, a.version == sframe::kVersion2 && a.pcrel ? " pcrel" : "",
             plan->address, bytes->size(), conv->section.fdes.size(), plan->segment_vaddr);
  return kExitOk;
}

}  // namespace

void add_sframe_build_command(CLI::App& app, int& exit_code) {
  CLI::App* group = sframe_group(app);
  auto args = std::make_shared<BuildArgs>();
  CLI::App* build = group->add_subcommand(
      "build", "Write a copy of an ELF file with a .sframe made from its DWARF CFI");
  build->footer(
      "The section is made from .eh_frame (else .debug_frame) following gas's rules for what "
      "SFrame can express; v3 uses flexible FDEs where a row needs them. It is loaded by a new "
      "PT_LOAD (which also holds the grown program header table) and named by PT_GNU_SFRAME. "
      "x86_64 and AArch64, little-endian ELF64.");
  build->add_option("IN", args->in, "ELF file with DWARF CFI")->required()->check(CLI::ExistingFile);
  build->add_option("--version", args->version, "SFrame version to write (default 3)")
      ->check(CLI::IsMember({1, 2, 3}));
  build->add_flag("--pcrel", args->pcrel,
                  "v2: function starts relative to each FDE (binutils 2.45); v3 always is");
  build->add_flag("-v,--verbose", args->verbose, "list every skipped function and why");
  build->add_option("-o,--output", args->out, "output file")->required();
  build->callback([args, &exit_code] {
    if (args->version == sframe::kVersion3) args->pcrel = true;
    if (args->version == sframe::kVersion1) args->pcrel = false;
    exit_code = run_build(*args);
  });
}

}  // namespace unwindkit::cli
