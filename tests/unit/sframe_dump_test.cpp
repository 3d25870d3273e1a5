// sframe::dump straight from the bytes (the CLI's dump) on a section whose text is many of
// dump()'s pieces: the same text as the decoded section's dump, and nothing at all printed for
// a section decode() refuses, however late its fault.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "sframe_builder.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/dump.h"
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

TEST(SFrameDumpFromBytes, ALateBadRowPrintsNothing) {
  auto spec = many_functions();
  spec.fdes.back().fres[0].info = test::fre_info(true, 1, sframe::kWordSizeCodeInvalid);
  const auto bytes = test::build_sframe(spec);
  auto decoded = sframe::decode(bytes, kAddress);
  ASSERT_FALSE(decoded);
  Printed printed;
  auto done = dump_bytes(bytes, printed);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().to_string(), decoded.error().to_string());
  EXPECT_EQ(printed.pieces, 0);
}

}  // namespace
