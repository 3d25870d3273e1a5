// `unwindkit sframe check --registers FILE [--json]`: per SFrame function, which callee-saved
// registers the prologue analyzer proves at its call sites and why not the rest
// (prologue/report.h). Exit 0 whatever it proves: it reports, it does not judge.
#include <cstdio>

#include "commands.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/prologue/report.h"

namespace unwindkit::cli {

int run_check_registers(const std::string& path, bool as_json) {
  auto file = elf::ElfFile::map(path);
  if (!file) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(), file.error().to_string().c_str());
    return kExitDataProblem;
  }
  auto report = prologue::registers_report(*file);
  if (!report) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(), report.error().to_string().c_str());
    return kExitDataProblem;
  }
  write_stdout(as_json ? prologue::registers_json(path, *report)
                       : prologue::registers_text(path, *report));
  return kExitOk;
}

}  // namespace unwindkit::cli
