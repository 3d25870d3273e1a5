// `unwindkit sframe convert IN --to-version 2|3 [--pcrel] -o OUT`: a copy of an ELF file whose
// .sframe section is re-encoded as v2 or v3 (sframe/encode.h). The new section is appended to
// the file with a new section header table (elf/section_replace.h) and given an address past
// the loaded image, so the function start fields are recomputed for a real new location.
// Program headers are left alone: PT_GNU_SFRAME still points at the original bytes, which stay
// in the loaded image, so the copy runs as before and readers that use the section headers
// (unwindkit, readelf, GDB) see the converted section.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/elf/section_replace.h"
#include "unwindkit/sframe/encode.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace unwindkit::cli {

namespace {

struct ConvertArgs {
  std::string in;
  std::string out;
  int version = 0;
  bool pcrel = false;
};

int report(const std::string& path, const Error& e) {
  std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(), e.to_string().c_str());
  return kExitDataProblem;
}

int run_convert(const ConvertArgs& a) {
  auto file = elf::ElfFile::map(a.in);  // the copy is written from the mapped bytes
  if (!file) return report(a.in, file.error());
  const elf::Section* s = file->section(sframe::kSectionName);
  if (s == nullptr || s->type == elf::kSectionNoBits) {
    std::fprintf(stderr, "unwindkit: %s: no .sframe section\n", a.in.c_str());
    return kExitDataProblem;
  }
  auto decoded = sframe::decode(s->data, s->addr);
  if (!decoded) return report(a.in, decoded.error());

  const uint64_t address = elf::end_of_loaded_image(*file);
  const sframe::EncodeOptions options{static_cast<uint8_t>(a.version), a.pcrel, address};
  auto bytes = sframe::encode(*decoded, options);
  if (!bytes) return report(a.in, bytes.error());
  // What we write must pass the checks we apply to what others write.
  const auto problems = sframe::validate(*bytes, address);
  if (!problems.empty()) return report(a.in, problems.front());
  auto image = elf::replace_section(*file, sframe::kSectionName, *bytes, address);
  if (!image) return report(a.in, image.error());

  if (!write_copy(a.in, a.out, *image)) return kExitDataProblem;
  fmt::print("{}: .sframe v{} -> v{}{} at {:#x} ({} bytes)\n", a.out, decoded->header.version,
             a.version, a.version == sframe::kVersion2 && a.pcrel ? " pcrel" : "", address,
             bytes->size());
  return kExitOk;
}

}  // namespace

void add_sframe_convert_command(CLI::App& app, int& exit_code) {
  CLI::App* group = sframe_group(app);
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* convert = group->add_subcommand(
      "convert", "Write a copy of an ELF file with .sframe re-encoded as v2 or v3");
  convert->footer(
      "The new section is appended (with a new section header table) at an address past the "
      "loaded image. Program headers are unchanged: PT_GNU_SFRAME still points at the original "
      "bytes, which stay in the loaded image. Readers that use the section headers (unwindkit, "
      "readelf -S, GDB) see the new section.");
  convert->add_option("IN", args->in, "ELF file with a .sframe section")
      ->required()
      ->check(CLI::ExistingFile);
  convert->add_option("--to-version", args->version, "SFrame version to write")
      ->required()
      ->check(CLI::IsMember({2, 3}));
  convert->add_flag("--pcrel", args->pcrel,
                    "v2: function starts relative to each FDE (binutils 2.45); v3 always is");
  convert->add_option("-o,--output", args->out, "output file")->required();
  convert->callback([args, &exit_code] {
    if (args->version == sframe::kVersion3) args->pcrel = true;
    exit_code = run_convert(*args);
  });
}

}  // namespace unwindkit::cli
