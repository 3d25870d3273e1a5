// Fuzzes the core-file reader: notes (NT_PRSTATUS, NT_FILE, NT_AUXV), segments, and memory
// reads through the result. Mapped files are not opened: the paths come from the input.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "unwindkit/unwind/core_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto image = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  unwindkit::unwind::CoreOptions options;
  options.read_mapped_files = false;
  auto core = unwindkit::unwind::CoreFile::parse(image, "fuzz", options);
  if (!core) return 0;
  uint8_t buf[64];
  size_t sum = 0;
  for (const auto& t : core->threads()) {
    // Read around each thread's SP and PC, as a walker's first steps would.
    for (auto addr : {t.regs.sp(), t.regs.pc()})
      if (addr && core->memory().read(*addr, buf)) sum += buf[0];
  }
  for (const auto& m : core->mapped_files()) {
    sum += m.path.size();
    if (core->memory().read(m.start, buf)) sum += buf[0];
  }
  sum += core->auxv().size() + core->warnings().size();
  return sum == 0xdeadbeef ? 1 : 0;
}
