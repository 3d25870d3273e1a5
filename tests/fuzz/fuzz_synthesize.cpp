// Fuzzes the debuginfod server's converter (and the LLDB plugin's quick file): whatever the
// module's bytes, synthesize either fails with an error, has nothing to add, or gives an ELF
// file that reads back with the module's build-id (what a debugger checks before using it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/elf/elf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace unwindkit;
  auto image = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto module = elf::ElfFile::parse(image, "fuzz");
  if (!module) return 0;
  // GDB's file, LLDB's, and LLDB's quick one (no analysis: the rows read straight from the
  // section's bytes).
  debuginfo::SynthesizeOptions quick{debuginfo::FallbackNames::Lldb};
  quick.analyze = false;
  for (const debuginfo::SynthesizeOptions& options :
       {debuginfo::SynthesizeOptions{debuginfo::FallbackNames::Lldb},
        debuginfo::SynthesizeOptions{debuginfo::FallbackNames::None}, quick}) {
    auto made = debuginfo::synthesize(*module, options);
    if (!made || made->bytes.empty()) continue;
    auto out = elf::ElfFile::parse(
        std::make_shared<const std::vector<uint8_t>>(std::move(made->bytes)), "synthesized");
    if (!out || out->build_id() != module->build_id()) std::abort();
  }
  return 0;
}
