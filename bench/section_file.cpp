#include "section_file.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace unwindkit::bench {

SectionFile load_section(const std::string& path, const std::string& address) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "cannot read {}\n", path);
    std::exit(2);
  }
  SectionFile f;
  f.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  char* end = nullptr;
  f.address = std::strtoull(address.c_str(), &end, 0);
  if (address.empty() || *end != '\0') {
    fmt::print(stderr, "bad section address {}\n", address);
    std::exit(2);
  }
  return f;
}

}  // namespace unwindkit::bench
