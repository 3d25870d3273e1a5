// Paths and loaders shared by the unit tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace unwindkit::test {

inline std::filesystem::path shared_dir() { return UNWINDKIT_SHARED_DIR; }
inline std::filesystem::path source_dir() { return UNWINDKIT_SOURCE_DIR; }

inline std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace unwindkit::test
