// validate(): one corruption class per test, asserting the byte offset and the field named.
// Offsets are worked out by hand from the layout (header 28 bytes; v2 FDEs 20 bytes each;
// the FRE sub-section follows the FDEs).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "sframe_builder.h"
#include "unwindkit/bytes.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace {

using namespace unwindkit;
using test::FdeSpec;
using test::fre_info;
using test::SectionSpec;

// v2 AMD64, two functions. Layout: FDE 0 at 28, FDE 1 at 48, FRE sub-section at 68:
// f0 rows at 68 (3 bytes), 71 (4 bytes), 75 (4 bytes); f1 row at 79; section ends at 82.
SectionSpec two_functions() {
  SectionSpec spec;
  spec.fdes = {
      FdeSpec{0x1000, 0x20, 0, 0, 0,
              {{0, fre_info(true, 1), {8}},
               {1, fre_info(true, 2), {16, -16}},
               {4, fre_info(false, 2), {16, -16}}}},
      FdeSpec{0x1040, 0x10, 0, 0, 0, {{0, fre_info(true, 1), {8}}}},
  };
  return spec;
}

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

bool has(const std::vector<Error>& problems, uint64_t offset, const std::string& field) {
  return std::any_of(problems.begin(), problems.end(), [&](const Error& e) {
    return e.section == ".sframe" && e.offset == offset && e.field == field;
  });
}

std::string all(const std::vector<Error>& problems) {
  std::string out;
  for (const auto& e : problems) out += e.to_string() + "\n";
  return out;
}

TEST(SFrameValidate, CleanSectionHasNoProblems) {
  const auto bytes = test::build_sframe(two_functions());
  EXPECT_EQ(bytes.size(), 82u);
  EXPECT_TRUE(sframe::validate(bytes, 0).empty()) << all(sframe::validate(bytes, 0));
}

TEST(SFrameValidate, TruncatedHeader) {
  const auto bytes = test::build_sframe(two_functions());
  const auto p = sframe::validate(Bytes(bytes.data(), 10), 0);
  EXPECT_TRUE(has(p, 8, "sfh_num_fdes")) << all(p);
}

TEST(SFrameValidate, AuxHeaderPastTheEnd) {
  auto bytes = test::build_sframe(two_functions());
  bytes[7] = 200;
  const auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 7, "sfh_auxhdr_len")) << all(p);
}

TEST(SFrameValidate, FdeSubsectionPastTheEnd) {
  auto bytes = test::build_sframe(two_functions());
  put32(bytes, 20, 0x1000);  // sfh_fdeoff
  auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 20, "sfh_fdeoff")) << all(p);
  bytes = test::build_sframe(two_functions());
  put32(bytes, 8, 3);  // sfh_num_fdes: a third FDE would end at 28 + 60 = 88 > 82
  p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 8, "sfh_num_fdes")) << all(p);
}

TEST(SFrameValidate, FreSubsectionPastTheEnd) {
  auto bytes = test::build_sframe(two_functions());
  put32(bytes, 16, 15);  // sfh_fre_len: 68 + 15 = 83 > 82
  auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 16, "sfh_fre_len")) << all(p);
  bytes = test::build_sframe(two_functions());
  put32(bytes, 24, 0x100);  // sfh_freoff
  p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 24, "sfh_freoff")) << all(p);
}

TEST(SFrameValidate, SubsectionsOverlap) {
  auto bytes = test::build_sframe(two_functions());
  put32(bytes, 24, 20);  // sfh_freoff 20: FREs at 48, inside the FDEs [28, 68)
  const auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 24, "sfh_freoff")) << all(p);
}

TEST(SFrameValidate, SortedButNotIncreasing) {
  SectionSpec spec = two_functions();
  std::swap(spec.fdes[0], spec.fdes[1]);
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  EXPECT_TRUE(has(p, 48, "fde[1].start")) << all(p);
}

TEST(SFrameValidate, FunctionOutsideText) {
  const auto bytes = test::build_sframe(two_functions());
  // f0 [0x1000, 0x1020) fits; f1 [0x1040, 0x1050) runs past 0x1048.
  const auto p = sframe::validate(bytes, 0, {{0x1000, 0x1048}});
  EXPECT_TRUE(has(p, 48, "fde[1].start")) << all(p);
  EXPECT_FALSE(has(p, 28, "fde[0].start")) << all(p);
}

TEST(SFrameValidate, FreStartsNotIncreasing) {
  SectionSpec spec = two_functions();
  spec.fdes[0].fres[2].start = 1;
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  EXPECT_TRUE(has(p, 75, "fde[0].fre[2].start")) << all(p);
}

TEST(SFrameValidate, FreStartBeyondFunctionSize) {
  SectionSpec spec = two_functions();
  spec.fdes[0].fres[2].start = 0x20;
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  EXPECT_TRUE(has(p, 75, "fde[0].fre[2].start")) << all(p);
}

TEST(SFrameValidate, FreOutsideFreLen) {
  SectionSpec spec = two_functions();
  spec.fdes[1].num_fres_override = 2;  // a second row for f1 would start at 82, past fre_len
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  EXPECT_TRUE(has(p, 82, "fde[1].fre[1].start")) << all(p);
}

TEST(SFrameValidate, DataWordOutsideFreLen) {
  SectionSpec spec = two_functions();
  spec.fdes[1].fres[0].info = fre_info(true, 2);  // claims 2 words, 1 is there
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  EXPECT_TRUE(has(p, 82, "fde[1].fre[0].word[1]")) << all(p);
}

TEST(SFrameValidate, DataWordsNotConsumedExactly) {
  SectionSpec spec = two_functions();
  spec.version = 3;
  spec.fdes[1].info2 = 1;  // flexible: (control, offset) pairs
  // CFA pair, then a control word with no offset word after it.
  spec.fdes[1].fres[0] = {0, fre_info(true, 3), {57, 8, 25}};
  const auto bytes = test::build_sframe(spec);
  // v3: FDEs 16 bytes: FREs at 28 + 32 = 60. f0: attr 5 + rows 3 + 4 + 4 = 16 → f1's attr
  // at 76, its row at 81: start, info, then 1-byte words at 83, 84, 85.
  const auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 85, "fde[1].fre[0].word[2]")) << all(p);
}

TEST(SFrameValidate, MoreWordsThanTheAbiAllows) {
  SectionSpec spec = two_functions();
  spec.fdes[1].fres[0] = {0, fre_info(true, 3), {8, -16, -24}};  // AMD64: at most CFA + FP
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  // f1's row at 79: a 1-byte start, then the info byte the error names.
  EXPECT_TRUE(has(p, 80, "fde[1].fre[0].info")) << all(p);
}

TEST(SFrameValidate, WordSizeCode3) {
  SectionSpec spec = two_functions();
  spec.fdes[0].fres[0].info = fre_info(true, 1, 3);
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  EXPECT_TRUE(has(p, 69, "fde[0].fre[0].info")) << all(p);
}

TEST(SFrameValidate, UnknownVersionFlagsAbi) {
  auto bytes = test::build_sframe(two_functions());
  bytes[2] = 4;
  auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 2, "sfp_version")) << all(p);
  bytes = test::build_sframe(two_functions());
  bytes[3] = 0x9;
  p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 3, "sfp_flags")) << all(p);
  bytes = test::build_sframe(two_functions());
  bytes[4] = 5;
  p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 4, "sfh_abi_arch")) << all(p);
}

TEST(SFrameValidate, FramePointerFlagIsGoneInV3) {
  SectionSpec spec = two_functions();
  spec.version = 3;
  spec.flags = 0x3;
  const auto p = sframe::validate(test::build_sframe(spec), 0);
  EXPECT_TRUE(has(p, 3, "sfp_flags")) << all(p);
}

TEST(SFrameValidate, ForeignEndianWithAuxHeader) {
  SectionSpec spec = two_functions();
  spec.endian = host_endian() == Endian::Little ? Endian::Big : Endian::Little;
  spec.aux = {0, 0};
  const auto bytes = test::build_sframe(spec);
  const auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 7, "sfh_auxhdr_len")) << all(p);
  EXPECT_TRUE(sframe::decode(bytes, 0));  // still decodable
}

TEST(SFrameValidate, HeaderFreCountDisagrees) {
  auto bytes = test::build_sframe(two_functions());
  put32(bytes, 12, 5);
  const auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 12, "sfh_num_fres")) << all(p);
}

TEST(SFrameValidate, CollectsEveryProblem) {
  SectionSpec spec = two_functions();
  spec.fdes[0].fres[2].start = 1;                          // fde[0].fre[2].start at 75
  spec.fdes[1].fres[0] = {0, fre_info(true, 1, 3), {8}};  // fde[1].fre[0].info at 80
  auto bytes = test::build_sframe(spec);
  bytes[3] = 0x9;  // unknown flag
  const auto p = sframe::validate(bytes, 0);
  EXPECT_TRUE(has(p, 3, "sfp_flags")) << all(p);
  EXPECT_TRUE(has(p, 75, "fde[0].fre[2].start")) << all(p);
  EXPECT_TRUE(has(p, 80, "fde[1].fre[0].info")) << all(p);
}

}  // namespace

namespace {

// A section large enough to be checked in shares on several threads: its problems must be
// the ones put into it, each once, in FDE order, wherever the shares' bounds fall. A start
// that is not above the previous one is put at every bound a machine of 2 to 8 threads
// could draw (count * k / shares), so each share's first function is checked against the
// one before it, which another share read.
TEST(SFrameValidate, LargeSectionsProblemsInFunctionOrder) {
  constexpr size_t kCount = 140000;
  SectionSpec spec;
  spec.fdes.reserve(kCount);
  for (size_t i = 0; i < kCount; ++i)
    spec.fdes.push_back(FdeSpec{static_cast<int64_t>(0x1000 + 0x10 * i), 0x10, 0, 0, 0,
                                {{0, fre_info(true, 1), {8}}}});
  std::set<size_t> bounds;
  for (size_t shares = 2; shares <= 8; ++shares)
    for (size_t k = 1; k < shares; ++k) bounds.insert(kCount * k / shares);
  for (size_t b : bounds) spec.fdes[b].start = spec.fdes[b - 1].start;
  const auto bytes = test::build_sframe(spec);
  const auto problems = sframe::validate(bytes, 0);
  ASSERT_EQ(problems.size(), bounds.size());
  size_t k = 0;
  for (size_t b : bounds) {
    EXPECT_EQ(problems[k].offset, 28 + 20 * b) << b;  // v2: header 28 bytes, FDEs 20
    EXPECT_EQ(problems[k].field, "fde[" + std::to_string(b) + "].start") << b;
    ++k;
  }
}

}  // namespace
