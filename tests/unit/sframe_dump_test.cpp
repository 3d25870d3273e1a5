// sframe::dump and sframe::dump_json straight from the bytes (the CLI's dumps) on a section
// whose text is many pieces: the same text as the decoded section's dump (JSON: the same
// document nlohmann prints whole), and nothing at all printed for a section decode() refuses,
// however late its fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sframe_builder.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/report.h"
#include "unwindkit/sframe/sframe.h"

namespace {

using namespace unwindkit;

constexpr uint64_t kAddress = 0x4000;
constexpr int kFunctions = 4000;  // a dump of hundreds of kilobytes

// kFunctions functions of one row each (CFA = sp + 8, 1-byte row starts).
test::SectionSpec many_functions() {
  test::SectionSpec spec;
  for (int i = 0; i < kFunctions; ++i) {
    test::FdeSpec fde;
    fde.start = 0x1000 + 16 * i;
    fde.size = 16;
    fde.fres.push_back({0, test::fre_info(true, 1), {8}});
    spec.fdes.push_back(fde);
  }
  return spec;
}

struct Printed {
  std::string text;
  int pieces = 0;
};

Result<void> dump_bytes(const std::vector<uint8_t>& bytes, Printed& printed) {
  return sframe::dump(bytes, kAddress, sframe::Format::SFrame, [&](std::string_view piece) {
    printed.text.append(piece);
    ++printed.pieces;
  });
}

Result<void> dump_json_bytes(const std::vector<uint8_t>& bytes, Printed& printed) {
  return sframe::dump_json("prog", bytes, kAddress, sframe::Format::SFrame,
                           [&](std::string_view piece) {
                             printed.text.append(piece);
                             ++printed.pieces;
                           });
}

// Where two long texts first differ, with a little of each from there: gtest's own diff of
// texts of hundreds of kilobytes takes minutes.
std::string first_difference(std::string_view a, std::string_view b) {
  const auto [pa, pb] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (pa == a.end() && pb == b.end()) return {};
  const auto at = static_cast<size_t>(pa - a.begin());
  return "at byte " + std::to_string(at) + ": \"" + std::string(a.substr(at, 60)) + "\" vs \"" +
         std::string(b.substr(at, 60)) + "\"";
}

// The document dump_json(FileTable) prints whole, from the decoded section.
std::string whole_json(const std::vector<uint8_t>& bytes) {
  auto decoded = sframe::decode(bytes, kAddress);
  if (!decoded) return decoded.error().to_string();
  return sframe::dump_json(sframe::FileTable{"prog", &*decoded, {}, bytes.size()});
}

TEST(SFrameDumpFromBytes, SameTextAsTheDecodedSection) {
  const auto bytes = test::build_sframe(many_functions());
  auto decoded = sframe::decode(bytes, kAddress);
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  Printed printed;
  auto done = dump_bytes(bytes, printed);
  ASSERT_TRUE(done) << done.error().to_string();
  EXPECT_EQ(printed.text, sframe::dump(*decoded));
  EXPECT_GT(printed.pieces, 2);
}

// The text dump and the JSON one alike.
TEST(SFrameDumpFromBytes, ALateBadRowPrintsNothing) {
  auto spec = many_functions();
  spec.fdes.back().fres[0].info = test::fre_info(true, 1, sframe::kWordSizeCodeInvalid);
  const auto bytes = test::build_sframe(spec);
  auto decoded = sframe::decode(bytes, kAddress);
  ASSERT_FALSE(decoded);
  for (const auto dump : {&dump_bytes, &dump_json_bytes}) {
    Printed printed;
    auto done = dump(bytes, printed);
    ASSERT_FALSE(done);
    EXPECT_EQ(done.error().to_string(), decoded.error().to_string());
    EXPECT_EQ(printed.pieces, 0);
  }
}

TEST(SFrameDumpFromBytes, JsonSameDocumentAsTheDecodedSection) {
  const auto bytes = test::build_sframe(many_functions());
  Printed printed;
  auto done = dump_json_bytes(bytes, printed);
  ASSERT_TRUE(done) << done.error().to_string();
  EXPECT_EQ(first_difference(printed.text, whole_json(bytes)), "");
  EXPECT_GT(printed.pieces, 2);
  EXPECT_EQ(nlohmann::json::parse(printed.text)["functions"].size(), size_t{kFunctions});
}

TEST(SFrameDumpFromBytes, JsonOfNoFunctions) {
  const auto bytes = test::build_sframe(test::SectionSpec{});
  Printed printed;
  auto done = dump_json_bytes(bytes, printed);
  ASSERT_TRUE(done) << done.error().to_string();
  EXPECT_EQ(printed.text, whole_json(bytes));
  EXPECT_NE(printed.text.find("\n  \"functions\": [],\n"), std::string::npos) << printed.text;
}

}  // namespace
