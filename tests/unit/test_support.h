// Paths and loaders shared by the unit tests.
#pragma once

#include <cstdint>
#include <cstdio>
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

// The stdout of a shell command (a reference tool such as readelf), whatever its exit status.
inline std::string run_output(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace unwindkit::test
