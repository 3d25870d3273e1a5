// The time a module's side file takes to make (debuginfo::synthesize: the SFrame checks,
// every function's prologue analysis, the CFI and ELF writing), wall and CPU of this process,
// per round; the file of the last round is written to OUT, for `cmp` against another build's.
// Usage: synthesize_bench MODULE none|lldb|quick [ROUNDS [OUT]]
//   none: GDB's file (FallbackNames::None); lldb: the file LLDB's plugin makes as the module
//   loads (FallbackNames::Lldb); quick: LLDB's file with no analysis (SynthesizeOptions::
//   analyze false), which LLDB gets first for a large module.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/elf/elf_file.h"

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace unwindkit;
  const std::string_view names = argc > 2 ? argv[2] : "";
  if (argc < 3 || argc > 5 || (names != "none" && names != "lldb" && names != "quick")) {
    fmt::print(stderr, "usage: {} MODULE none|lldb|quick [ROUNDS [OUT]]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 3 ? std::stoi(argv[3]) : 1;
  // The quick file is made of what the server reads for it: the file without its code.
  auto module = names == "quick" ? elf::ElfFile::open(argv[1], elf::ElfFile::Contents::NoCode)
                                 : elf::ElfFile::map(argv[1]);
  if (!module) {
    fmt::print(stderr, "{}\n", module.error().to_string());
    return 1;
  }
  debuginfo::SynthesizeOptions options;
  options.fallback_names = names == "none" ? debuginfo::FallbackNames::None
                                           : debuginfo::FallbackNames::Lldb;
  options.analyze = names != "quick";
  debuginfo::DebugFile file;
  for (int round = 0; round < rounds; ++round) {
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    auto made = debuginfo::synthesize(*module, options);
    const double cpu = cpu_seconds() - cpu0;
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
    if (!made) {
      fmt::print(stderr, "{}\n", made.error().to_string());
      return 1;
    }
    fmt::print("SYNTHESIZE wall {:.3f} s cpu {:.3f} s bytes {}\n", wall.count(), cpu,
               made->bytes.size());
    file = std::move(*made);
  }
  if (argc > 4) {
    std::FILE* out = std::fopen(argv[4], "wb");
    if (out == nullptr || std::fwrite(file.bytes.data(), 1, file.bytes.size(), out) != file.bytes.size() ||
        std::fclose(out) != 0) {
      fmt::print(stderr, "cannot write {}\n", argv[4]);
      return 1;
    }
  }
  return 0;
}
