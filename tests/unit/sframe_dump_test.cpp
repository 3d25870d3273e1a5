// sframe::dump and sframe::dump_json straight from the bytes (the CLI's dumps) on a section
// whose text is many pieces: the same text as the decoded section's dump (JSON: the same
// document nlohmann prints whole), and nothing at all printed for a section decode() refuses,
// however late its fault. The debugger commands' reports of several files, streamed the same
// way: each file's text framed as join_file_texts frames it, and the array nlohmann prints of
// the documents.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sframe_builder.h"
#include "unwindkit/file_report.h"
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

// Three files as a debugger's `unwindkit sframe dump` covers them: one whose section dumps,
// one whose section decode() refuses (late: after many functions would have printed), one
// with none.
struct ThreeFiles {
  std::vector<uint8_t> good = test::build_sframe(many_functions());
  std::vector<uint8_t> bad = [] {
    auto spec = many_functions();
    spec.fdes.back().fres[0].info = test::fre_info(true, 1, sframe::kWordSizeCodeInvalid);
    return test::build_sframe(spec);
  }();
  std::string bad_error = sframe::decode(bad, kAddress).error().to_string();
  std::vector<sframe::FileSection> files{{"prog", good, kAddress, sframe::Format::SFrame, {}},
                                         {"lib.so", bad, kAddress, sframe::Format::SFrame, {}},
                                         {"libc.so.6", std::nullopt, 0, {}, {}}};
};

Printed report(void (*dump)(const std::vector<sframe::FileSection>&, const Sink&),
               const std::vector<sframe::FileSection>& files) {
  Printed printed;
  dump(files, [&](std::string_view piece) {
    printed.text.append(piece);
    ++printed.pieces;
  });
  return printed;
}

TEST(SFrameDumpOfFiles, TextEachUnderItsName) {
  const ThreeFiles f;
  auto decoded = sframe::decode(f.good, kAddress);
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  const Printed printed = report(&sframe::dump_text, f.files);
  const std::string expected = join_file_texts({{"prog", sframe::dump(*decoded)},
                                                {"lib.so", "lib.so: " + f.bad_error + "\n"},
                                                {"libc.so.6", "libc.so.6: no .sframe section\n"}});
  EXPECT_EQ(first_difference(printed.text, expected), "");
  EXPECT_GT(printed.pieces, 2);
  // One file prints bare: readelf's text, or its problem.
  EXPECT_EQ(report(&sframe::dump_text, {f.files[0]}).text, sframe::dump(*decoded));
  EXPECT_EQ(report(&sframe::dump_text, {f.files[1]}).text, "lib.so: " + f.bad_error + "\n");
}

TEST(SFrameDumpOfFiles, JsonTheArrayOfTheirDocuments) {
  const ThreeFiles f;
  using nlohmann::json;
  const json expected = json::array(
      {json::parse(whole_json(f.good)),
       {{"schema", "unwindkit-sframe-dump/1"}, {"file", "lib.so"}, {"error", f.bad_error}},
       {{"schema", "unwindkit-sframe-dump/1"},
        {"file", "libc.so.6"},
        {"error", "no .sframe section"}}});
  const Printed printed = report(&sframe::dump_json, f.files);
  EXPECT_EQ(first_difference(printed.text, expected.dump(2) + "\n"), "");
  EXPECT_GT(printed.pieces, 2);
  EXPECT_EQ(report(&sframe::dump_json, {}).text, "[]\n");
}

}  // namespace
