// A bare .sframe section image as scripts/bench extracts it (objcopy -O binary), with the
// address readelf gave for it: the input both SFrame benchmarks share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace unwindkit::bench {

struct SectionFile {
  std::vector<uint8_t> bytes;
  uint64_t address = 0;
};

// Exits with a message on a missing file or a malformed address: a benchmark has no
// caller to hand an error to.
SectionFile load_section(const std::string& path, const std::string& address);

}  // namespace unwindkit::bench
