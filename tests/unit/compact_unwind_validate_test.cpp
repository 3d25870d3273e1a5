// __unwind_info decoder, validator and lookup on a hand-built section. Layout (offsets by
// hand, notes §2): header 0..28; common encodings @28 {RBP_FRAME, STACK_IMMD size 1};
// personalities @36 {0x2000}; index @40 {0x1000, page 72, lsda 64} + sentinel {0x1100, 0,
// 72}; LSDA @64 {0x1010 -> 0x3000}; compressed page @72: header 12 bytes, entries @84
// {common 0 @+0, page-local 2 @+0x10, common 1 @+0x40}, page encodings @96 {0x51000000 =
// RBP_FRAME | personality 1 | HAS_LSDA}. 100 bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "unwindkit/compact_unwind/lookup.h"
#include "unwindkit/compact_unwind/unwind_info.h"

namespace unwindkit::compact_unwind {
namespace {

struct Builder {
  std::vector<uint8_t> b;
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u16(uint16_t v) {
    b.push_back(static_cast<uint8_t>(v));
    b.push_back(static_cast<uint8_t>(v >> 8));
  }
};

std::vector<uint8_t> good_section() {
  Builder s;
  for (uint32_t v : {1u, 28u, 2u, 36u, 1u, 40u, 2u}) s.u32(v);
  s.u32(0x01000000);
  s.u32(0x02010000);
  s.u32(0x2000);
  for (uint32_t v : {0x1000u, 72u, 64u, 0x1100u, 0u, 72u}) s.u32(v);
  s.u32(0x1010);
  s.u32(0x3000);
  s.u32(3);
  s.u16(12);
  s.u16(3);
  s.u16(24);
  s.u16(1);
  s.u32(0x00000000);
  s.u32(0x02000010);
  s.u32(0x01000040);
  s.u32(0x51000000);
  return s.b;
}

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

std::vector<Error> check(const std::vector<uint8_t>& b) {
  return validate_unwind_info(b, Arch::X86_64);
}

// The error expected, by offset and field: the only one, or with `consequences` further
// errors that follow from it (a missing array makes the entries that use it fail too).
void expect_error(const std::vector<uint8_t>& b, uint64_t offset, const std::string& field,
                  size_t consequences = 0) {
  auto errors = check(b);
  ASSERT_EQ(errors.size(), 1u + consequences)
      << (errors.empty() ? "none" : errors.back().to_string());
  EXPECT_EQ(errors[0].section, "__unwind_info");
  EXPECT_EQ(errors[0].offset, offset) << errors[0].to_string();
  EXPECT_EQ(errors[0].field, field) << errors[0].to_string();
}

TEST(CompactUnwindDecode, GoodSection) {
  const auto b = good_section();
  EXPECT_TRUE(check(b).empty());
  auto info = decode_unwind_info(b);
  ASSERT_TRUE(info) << info.error().to_string();
  ASSERT_EQ(info->pages.size(), 1u);
  const auto& e = info->pages[0].entries;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[1], (PageEntry{0x1010, 0x51000000, 2}));
  EXPECT_EQ(e[2], (PageEntry{0x1040, 0x02010000, 1}));
  EXPECT_EQ(info->lsdas, (std::vector<LsdaEntry>{{0x1010, 0x3000}}));
}

TEST(CompactUnwindValidate, VersionMustBeOne) {
  auto b = good_section();
  put32(b, 0, 2);
  expect_error(b, 0, "header.version");
}

TEST(CompactUnwindValidate, ShortHeader) {
  auto b = good_section();
  b.resize(20);
  expect_error(b, 20, "header.index_offset");
}

TEST(CompactUnwindValidate, CommonArrayPastTheEnd) {
  auto b = good_section();
  put32(b, 8, 1000);
  expect_error(b, 28, "common_encodings", 1);
}

TEST(CompactUnwindValidate, TooManyPersonalities) {
  auto b = good_section();
  put32(b, 16, 4);  // four: fits in the section (they overlap the index), but not 2 bits
  auto errors = check(b);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].field, "header.personalities_count");
  EXPECT_EQ(errors[0].offset, 16u);
}

TEST(CompactUnwindValidate, IndexPastTheEnd) {
  auto b = good_section();
  put32(b, 24, 100);
  expect_error(b, 40, "index");
}

TEST(CompactUnwindValidate, NoIndexEntries) {
  auto b = good_section();
  put32(b, 24, 0);
  expect_error(b, 24, "header.index_count");
}

TEST(CompactUnwindValidate, LastEntryMustBeASentinel) {
  auto b = good_section();
  put32(b, 56, 72);  // the sentinel gets a page
  expect_error(b, 56, "index[1].page_offset");
}

TEST(CompactUnwindValidate, IndexMustBeSorted) {
  auto b = good_section();
  put32(b, 52, 0x0800);  // sentinel below the first entry
  auto errors = check(b);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].field, "index[1].function_offset");
  EXPECT_EQ(errors[0].offset, 52u);
}

TEST(CompactUnwindValidate, LsdaOffsetsOnEntryBoundaries) {
  auto b = good_section();
  put32(b, 60, 70);  // sentinel's LSDA end not on an 8-byte boundary from 64
  expect_error(b, 60, "index[1].lsda_offset", 1);
}

TEST(CompactUnwindValidate, UnknownPageKind) {
  auto b = good_section();
  put32(b, 72, 7);
  expect_error(b, 72, "page[0].kind");
}

TEST(CompactUnwindValidate, PageEntriesPastTheEnd) {
  auto b = good_section();
  b[78] = 200;  // entry count 200
  expect_error(b, 76, "page[0].entries");
}

TEST(CompactUnwindValidate, EncodingIndexPastBothArrays) {
  auto b = good_section();
  put32(b, 88, 0x03000010);  // index 3: 2 common + 1 page-local
  expect_error(b, 91, "page[0].entry[1].encoding_index");
}

TEST(CompactUnwindValidate, EntryOutsideItsPage) {
  auto b = good_section();
  put32(b, 92, 0x01000200);  // 0x1200 is past the sentinel's 0x1100
  expect_error(b, 92, "page[0].entry[2].function_offset");
}

TEST(CompactUnwindValidate, PageMustBeSorted) {
  auto b = good_section();
  put32(b, 92, 0x01000008);  // 0x1008 after 0x1010
  expect_error(b, 92, "page[0].entry[2].function_offset");
}

TEST(CompactUnwindValidate, BadPermutationInACommonEncoding) {
  auto b = good_section();
  put32(b, 32, 0x02010000 | (1u << 10) | 6u);  // one register, digit 6
  expect_error(b, 32, "common_encodings[1]");
}

TEST(CompactUnwindValidate, PersonalityBeyondTheArray) {
  auto b = good_section();
  put32(b, 96, 0x61000000);  // personality 2 of 1, HAS_LSDA still set
  expect_error(b, 88, "page[0].entry[1].encoding");
}

TEST(CompactUnwindValidate, HasLsdaWithoutAnLsdaEntry) {
  auto b = good_section();
  put32(b, 64, 0x1020);  // the LSDA entry names another function
  expect_error(b, 88, "page[0].entry[1].encoding");
}

TEST(CompactUnwindValidate, CollectsEveryProblem) {
  auto b = good_section();
  put32(b, 32, 0x0f000000);  // unknown mode in a common encoding
  put32(b, 92, 0x01000008);  // page not sorted
  put32(b, 56, 72);          // no sentinel
  auto errors = check(b);
  std::vector<std::string> fields;
  for (const auto& e : errors) fields.push_back(e.field);
  std::sort(fields.begin(), fields.end());
  EXPECT_EQ(fields, (std::vector<std::string>{"common_encodings[1]", "index[1].page_offset",
                                              "page[0].entry[2].function_offset"}));
}

TEST(CompactUnwindValidate, TrailingEncodingZeroEntryAtTheEndIsTheLinkersTerminator) {
  auto b = good_section();
  put32(b, 92, 0x00000100);  // common 0 is not 0: an entry at the end with an encoding
  expect_error(b, 92, "page[0].entry[2].function_offset");
  put32(b, 28, 0);  // now common 0 is encoding 0: the terminator lld and ld64 write
  EXPECT_TRUE(check(b).empty());
}

constexpr uint64_t kBase = 0x100000000;

TEST(CompactUnwindLookup, EntryRangePersonalityLsda) {
  auto info = decode_unwind_info(good_section());
  ASSERT_TRUE(info);
  auto e = lookup(*info, kBase, kBase + 0x1015);
  ASSERT_TRUE(e && *e);
  EXPECT_EQ(**e, (Entry{kBase + 0x1010, kBase + 0x1040, 0x51000000, 0x2000, 0x3000}));
  // The last entry ends at the sentinel.
  auto last = lookup(*info, kBase, kBase + 0x10ff);
  ASSERT_TRUE(last && *last);
  EXPECT_EQ((*last)->function_end, kBase + 0x1100);
}

TEST(CompactUnwindLookup, SentinelAndOutsideAreNotCovered) {
  auto info = decode_unwind_info(good_section());
  ASSERT_TRUE(info);
  EXPECT_FALSE(*lookup(*info, kBase, kBase + 0x1100));
  EXPECT_FALSE(*lookup(*info, kBase, kBase + 0xfff));
  EXPECT_FALSE(*lookup(*info, kBase, 0x1000));
}

TEST(CompactUnwindLookup, OfTwoEntriesAtOneAddressTheFirstIsEmpty) {
  auto b = good_section();
  put32(b, 88, 0x02000000);  // entry 1 moves onto entry 0's address 0x1000
  put32(b, 64, 0x1000);      // and its LSDA with it
  auto info = decode_unwind_info(b);
  ASSERT_TRUE(info);
  auto e = lookup(*info, kBase, kBase + 0x1000);
  ASSERT_TRUE(e && *e);
  EXPECT_EQ((*e)->encoding, 0x51000000u);
  EXPECT_EQ((*e)->function_end, kBase + 0x1040);
}

TEST(CompactUnwindLookup, EncodingZeroIsNoInformation) {
  auto b = good_section();
  put32(b, 28, 0);  // entry 0 now has encoding 0
  auto info = decode_unwind_info(b);
  ASSERT_TRUE(info);
  auto e = lookup(*info, kBase, kBase + 0x1004);
  ASSERT_TRUE(e && *e);
  auto l = lower(Arch::X86_64, **e, {});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->kind, Lowered::Kind::NoInfo);
}

}  // namespace
}  // namespace unwindkit::compact_unwind
