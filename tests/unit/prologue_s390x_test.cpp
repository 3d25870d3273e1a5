// The prologue analyzer on s390x code. The bytes are what llvm-mc-22 (s390x-linux-gnu)
// produced for the GCC-style assembly quoted beside them; the expected saves are that
// assembly's CFI as readelf --debug-dump=frames-interp printed it, at every row.
#include <gtest/gtest.h>

#include <vector>

#include "prologue_support.h"

namespace {

using namespace unwindkit;
using test::saved_at;
using test::unchanged_at;
using Saved = std::map<uint16_t, int64_t>;
namespace r = reg::s390x;

constexpr uint64_t kBase = 0x1000;

// 0 stmg %r6,%r15,48(%r15) / 6 aghi %r15,-176 / a std %f8,160(%r15) / e lgr %r7,%r2
// 12 brasl %r14,g / 18 ld %f8,160(%r15) / 1c lmg %r6,%r15,224(%r15) / 22 br %r14
const std::vector<uint8_t> kFunction = {
    0xeb, 0x6f, 0xf0, 0x30, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x50, 0x60, 0x80, 0xf0, 0xa0,
    0xb9, 0x04, 0x00, 0x72, 0xc0, 0xe5, 0x00, 0x00, 0x00, 0x00, 0x68, 0x80, 0xf0, 0xa0,
    0xeb, 0x6f, 0xf0, 0xe0, 0x00, 0x04, 0x07, 0xfe};

// readelf:  LOC CFA      r6    r7    r11  ra   r15  f8
//           0   r15+160  u     u     u    u    u    u
//           6   r15+160  c-112 c-104 c-72 c-48 c-40 u
//           a   r15+336  c-112 c-104 c-72 c-48 c-40 u
//           e   r15+336  c-112 c-104 c-72 c-48 c-40 c-176
//           22  r15+160  u     u     u    u    u    u
// GCC names only the registers the function uses; stmg stores r6-r15 all, each at
// CFA - 160 + 48 + 8 * (n - 6).
TEST(PrologueS390x, StoreMultipleAndFloatingPointSaves) {
  const auto rows = test::table(Arch::S390x, kBase, kFunction.size(),
                                {{0x0, r::r15, 160}, {0x6, r::r15, 160}, {0xa, r::r15, 336},
                                 {0x22, r::r15, 160}});
  const auto a = prologue::analyze(Arch::S390x, kFunction, kBase, rows);
  EXPECT_TRUE(a.fully_explained);
  EXPECT_FALSE(a.stopped) << a.stopped->to_string();
  EXPECT_EQ(saved_at(a, kBase), Saved{});
  EXPECT_TRUE(unchanged_at(a, kBase));
  Saved gprs;
  for (uint16_t n = 6; n <= 13; ++n) gprs[n] = -112 + 8 * (n - 6);
  EXPECT_EQ(gprs[6], -112);
  EXPECT_EQ(gprs[7], -104);
  EXPECT_EQ(gprs[11], -72);
  EXPECT_EQ(saved_at(a, kBase + 0x6), gprs);
  EXPECT_EQ(saved_at(a, kBase + 0xa), gprs);
  Saved with_f8 = gprs;
  with_f8[24] = -176;  // f8's DWARF number in the s390x ELF ABI
  EXPECT_EQ(saved_at(a, kBase + 0xe), with_f8);
  EXPECT_EQ(saved_at(a, kBase + 0x12), with_f8);
  EXPECT_TRUE(unchanged_at(a, kBase + 0x12));  // f9-f15
  EXPECT_EQ(saved_at(a, kBase + 0x22), Saved{});  // restored by lmg: claimed neither way
  EXPECT_FALSE(unchanged_at(a, kBase + 0x22));
}

}  // namespace
