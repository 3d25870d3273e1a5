// The shared SFrame vectors that carry bytes (shared/vectors/sframe/*.json with `content`),
// sorted by file name. Used by the dump and the writer tests.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace unwindkit::test {

struct SFrameVector {
  std::string name;
  std::vector<uint8_t> content;
  uint64_t section_base = 0;
  std::string groundtruth;
};

inline std::vector<SFrameVector> load_sframe_vectors() {
  std::vector<SFrameVector> out;
  const std::filesystem::path dir = shared_dir() / "vectors" / "sframe";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto j = nlohmann::json::parse(in);
    if (!j.contains("content") || !j["content"].is_array() || !j.contains("groundtruth")) continue;
    SFrameVector v;
    v.name = entry.path().filename().string();
    v.content = j["content"].get<std::vector<uint8_t>>();
    v.section_base = j["section_base"].get<uint64_t>();
    v.groundtruth = j["groundtruth"].get<std::string>();
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(),
            [](const SFrameVector& a, const SFrameVector& b) { return a.name < b.name; });
  return out;
}

}  // namespace unwindkit::test
