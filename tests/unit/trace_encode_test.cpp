// .trace writing: the line table of the 199-byte module with the shortest records, bytes
// assembled by hand (CO2 ce 06 = line +6 over 0xf bytes, CO1 91 = +1 over 0x12, ...).
#include <gtest/gtest.h>

#include "trace_vectors.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/encode.h"

namespace unwindkit::trace {
namespace {

using namespace test;

ModuleLines module199_lines() {
  ModuleLines m;
  m.code_begin = kBegin;
  m.code_size = 0x8e;
  m.files = kFiles;
  m.routines = {{"main", {{kBegin, kBegin + 0xf, 0, 6}, {kBegin + 0xf, kBegin + 0x21, 0, 7}}},
                {"subr1",
                 {{kBegin + 0x30, kBegin + 0x3b, 0, 10},
                  {kBegin + 0x3b, kBegin + 0x4a, 0, 11},
                  {kBegin + 0x4a, kBegin + 0x58, 0, 12},
                  {kBegin + 0x58, kBegin + 0x61, 0, 13}}},
                {"subr2", {{kBegin + 0x70, kBegin + 0x7b, 1, 4}, {kBegin + 0x7b, kBegin + 0x8e, 1, 5}}}};
  return m;
}

TEST(TraceEncode, ShortestRecords) {
  B want = header(0x9c, kBegin, 0x8e, kFiles);
  rtn64(want, "main", kBegin);
  want.insert(want.end(), {0xce, 0x06, 0x91});
  rtn64(want, "subr1", kBegin + 0x30);
  want.insert(want.end(), {0xca, 0x03, 0x8e, 0x8d, 0x88});
  want.insert(want.end(), {0x03, 0x01, 0, 0, 0});
  rtn64(want, "subr2", kBegin + 0x70);
  want.insert(want.end(), {0xca, 0xf7, 0x92});
  ASSERT_EQ(want.size(), 0x9cu);
  const ModuleLines m = module199_lines();
  auto got = encode(std::span(&m, 1), 8);
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ(*got, want);
}

TEST(TraceEncode, LongFormsAndGaps) {
  ModuleLines m;
  m.code_begin = 0x1000;
  m.code_size = 0x30000;
  m.files = {"x.f90"};
  // +200 lines over 0x41 bytes: LN2 (c8 00 does not fit i8) + PC1 40; -1 over 0x10001: LN1 ff
  // + PC4 00 00 01 00; then a gap: a second RTN of the same routine; +1 over 0x100: LN1 + PC1 ff.
  m.routines = {{"f",
                 {{0x1000, 0x1041, 0, 200},
                  {0x1041, 0x11042, 0, 199},
                  {0x12000, 0x12100, 0, 200}}}};
  auto got = encode(std::span(&m, 1), 4);
  ASSERT_TRUE(got) << got.error().to_string();
  B want{0x0a, 0x02, 0x00, 0x00, 0, 0, 0, 0, 0x00, 0x10, 0, 0, 0x01, 0, 0, 0,
         0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x05, 0x00, 'x', '.', 'f', '9', '0'};  // 29
  const auto rtn32 = [&](uint32_t pc) {
    while (want.size() % 4 != 0) want.push_back(0);
    want.insert(want.end(), {0x02, 0x00, 0x01, 0x00});
    le(want, pc, 4);
    want.push_back('f');
  };
  rtn32(0x1000);
  want.insert(want.end(), {0x05, 0xc8, 0x00, 0x07, 0x40});
  want.insert(want.end(), {0x04, 0xff, 0x09, 0x00, 0x00, 0x01, 0x00});
  rtn32(0x12000);
  want.insert(want.end(), {0x04, 0x01, 0x07, 0xff});
  const uint32_t size = static_cast<uint32_t>(want.size());
  for (unsigned i = 0; i < 4; ++i) want[4 + i] = static_cast<uint8_t>(size >> (8 * i));
  EXPECT_EQ(*got, want);
  // And the decoder reads it back to the same table.
  auto s = decode(*got, 4);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->rows.size(), 3u);
  EXPECT_EQ(s->rows[2].begin, 0x12000u);
  EXPECT_EQ(s->rows[2].line, 200);
}

TEST(TraceEncode, RejectsWhatCannotBeWritten) {
  ModuleLines m;
  m.files = {"a.c"};
  m.routines = {{"f", {{0x10, 0x10, 0, 1}}}};
  EXPECT_FALSE(encode(std::span(&m, 1), 8));
  m.routines = {{"f", {{0x10, 0x11, 1, 1}}}};
  EXPECT_FALSE(encode(std::span(&m, 1), 8));
  EXPECT_FALSE(encode(std::span(&m, 1), 2));
}

}  // namespace
}  // namespace unwindkit::trace
