// Every shared SFrame vector with bytes: our dump of `content` at `section_base` must equal
// the reference objdump text (`groundtruth`) after objdump's file-format lines. New vectors
// in shared/vectors/sframe/ are picked up without touching this file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/section.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace {

namespace fs = std::filesystem;
using namespace unwindkit;

struct Vector {
  std::string name;
  std::vector<uint8_t> content;
  uint64_t section_base = 0;
  std::string groundtruth;
};

std::vector<Vector> load_vectors() {
  std::vector<Vector> out;
  const fs::path dir = test::shared_dir() / "vectors" / "sframe";
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto j = nlohmann::json::parse(in);
    if (!j.contains("content") || !j["content"].is_array() || !j.contains("groundtruth")) continue;
    Vector v;
    v.name = entry.path().filename().string();
    v.content = j["content"].get<std::vector<uint8_t>>();
    v.section_base = j["section_base"].get<uint64_t>();
    v.groundtruth = j["groundtruth"].get<std::string>();
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const Vector& a, const Vector& b) { return a.name < b.name; });
  return out;
}

// objdump starts with "\n<file>:     file format <bfd>\n\n"; the SFrame text follows.
std::string strip_container(const std::string& text) {
  size_t pos = 0;
  for (int line = 0; line < 3; ++line) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return {};
    pos = nl + 1;
  }
  return text.substr(pos);
}

TEST(SFrameVectors, ThereAreVectorsWithBytes) { EXPECT_GE(load_vectors().size(), 60u); }

TEST(SFrameVectors, DumpEqualsObjdump) {
  for (const Vector& v : load_vectors()) {
    SCOPED_TRACE(v.name);
    auto section = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(section) << section.error().to_string();
    EXPECT_EQ(sframe::dump(*section), strip_container(v.groundtruth));
  }
}

// Sections binutils wrote are well-formed: the strict validator finds nothing in them.
TEST(SFrameVectors, ValidatorAcceptsEveryVector) {
  for (const Vector& v : load_vectors()) {
    SCOPED_TRACE(v.name);
    const auto problems = sframe::validate(v.content, v.section_base);
    for (const auto& e : problems) ADD_FAILURE() << e.to_string();
  }
}

}  // namespace
