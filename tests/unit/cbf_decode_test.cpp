// CBF decoding: the vectors of notes §4 (Swift's bytes) and every malformed form, each with
// the offset and field the decoder must name.
#include <gtest/gtest.h>

#include <vector>

#include "unwindkit/cbf/decode.h"

namespace unwindkit::cbf {
namespace {

using K = FrameKind;
using Runs = std::vector<cbf::Run>;

Run run(K k, uint64_t v, uint64_t count = 1) { return Run{Frame{k, v}, count}; }

TEST(CbfDecode, RepeatLimitVector) {
  // notes §4: pc 0x7f followed by 0x100001 repeats (1,048,578 frames), then end.
  const std::vector<uint8_t> b{0x02, 0x18, 0x7f, 0x8a, 0x10, 0x00, 0x01, 0x00};
  auto bt = decode(b);
  ASSERT_TRUE(bt) << bt.error().to_string();
  EXPECT_EQ(bt->word_size, WordSize::Bits64);
  EXPECT_EQ(frame_count(*bt), 1048578u);
  ASSERT_EQ(bt->runs.size(), 1u);
  EXPECT_EQ(bt->runs[0], run(K::ProgramCounter, 0x7f, 1048578));
  EXPECT_FALSE(bt->problem);
  EXPECT_EQ(bt->encoded_size, b.size());
}

const std::vector<uint8_t> kMixed{0x02, 0x11, 0x10, 0x00, 0x20, 0x10, 0x21, 0xff, 0x00, 0x35,
                                  0x7f, 0xff, 0x00, 0x00, 0x10, 0xf0, 0x44, 0x61, 0x03, 0xe8,
                                  0x29, 0x20, 0x20, 0x80, 0x11, 0x10, 0x10, 0x88, 0x09, 0x01};

TEST(CbfDecode, MixedVector) {
  auto bt = decode(kMixed);
  ASSERT_TRUE(bt) << bt.error().to_string();
  const Runs want{run(K::ProgramCounter, 0x1000),
                              run(K::ReturnAddress, 0x1010),
                              run(K::ReturnAddress, 0xf10),
                              run(K::AsyncResumePoint, 0x7fff00002000),
                              run(K::Omitted, 5),
                              run(K::Omitted, 1000),
                              run(K::ReturnAddress, 0x2020, 2),
                              run(K::ProgramCounter, 0x3030, 10),
                              run(K::Truncated, 0)};
  EXPECT_EQ(bt->runs, want);
  EXPECT_EQ(frame_count(*bt), 19u);
  EXPECT_FALSE(bt->problem);  // the marker came from a `trunc` instruction
  EXPECT_EQ(bt->encoded_size, kMixed.size());
}

TEST(CbfDecode, WordSizesSignExtendAndWrap) {
  // 32-bit: a single 0xff byte is 0xffffffff (spec example); then +1 wraps to 0.
  auto b32 = decode(std::vector<uint8_t>{0x01, 0x10, 0xff, 0x20, 0x01, 0x00});
  ASSERT_TRUE(b32);
  EXPECT_EQ(b32->runs, (Runs{run(K::ProgramCounter, 0xffffffff),
                                         run(K::ReturnAddress, 0)}));
  // 16-bit: absolute 0x8000 sign-extends but is shown in 16 bits; -2 relative gives 0x7ffe.
  auto b16 = decode(std::vector<uint8_t>{0x00, 0x19, 0x80, 0x00, 0x20, 0xfe, 0x00});
  ASSERT_TRUE(b16);
  EXPECT_EQ(b16->runs, (Runs{run(K::ProgramCounter, 0x8000),
                                         run(K::ReturnAddress, 0x7ffe)}));
  // 64-bit: 0x80 relative to 0 is -128 = 0xffffffffffffff80.
  auto b64 = decode(std::vector<uint8_t>{0x02, 0x10, 0x80, 0x00});
  ASSERT_TRUE(b64);
  EXPECT_EQ(b64->runs[0], run(K::ProgramCounter, 0xffffffffffffff80));
}

TEST(CbfDecode, InternalCountsAndOmitRepeat) {
  // omit 32 (ccccc = 31), rep of an omit frame repeats the omit, rep 8 internal.
  auto bt = decode(std::vector<uint8_t>{0x02, 0x5f, 0x80, 0x10, 0x01, 0x87, 0x00});
  ASSERT_TRUE(bt);
  EXPECT_EQ(bt->runs, (Runs{run(K::Omitted, 32, 2), run(K::ProgramCounter, 1, 9)}));
}

void expect_truncated_at(const std::vector<uint8_t>& b, uint64_t offset, const char* field) {
  auto bt = decode(b);
  ASSERT_TRUE(bt) << "info byte is fine";
  ASSERT_FALSE(bt->runs.empty());
  EXPECT_EQ(bt->runs.back().frame.kind, K::Truncated);
  ASSERT_TRUE(bt->problem);
  EXPECT_EQ(bt->problem->section, "CBF");
  EXPECT_EQ(bt->problem->offset, offset) << bt->problem->to_string();
  EXPECT_EQ(bt->problem->field, field) << bt->problem->to_string();
}

TEST(CbfDecode, ReservedOpcodesTruncate) {
  for (unsigned op = 0x02; op <= 0x0f; ++op)
    expect_truncated_at({0x02, 0x10, 0x05, static_cast<uint8_t>(op)}, 3, "instruction");
  for (unsigned op = 0x90; op <= 0xff; ++op)
    expect_truncated_at({0x02, 0x10, 0x05, static_cast<uint8_t>(op)}, 3, "instruction");
}

TEST(CbfDecode, MalformedForms) {
  expect_truncated_at({0x02, 0x12, 0x10, 0x00}, 4, "address");          // 3 bytes, 2 present
  expect_truncated_at({0x02, 0x80}, 1, "rep");                          // rep before any frame
  expect_truncated_at({0x02, 0x10, 0x7f, 0x8a, 0x10, 0x00, 0x02, 0x00}, 4, "rep.count");
  expect_truncated_at({0x02, 0x10, 0x7f, 0x89, 0x10}, 5, "rep.count");  // count cut short
  expect_truncated_at({0x02, 0x61, 0x03}, 3, "omit.count");
  expect_truncated_at({0x02, 0x68}, 2, "omit.count");  // 9 count bytes: more than a word
  expect_truncated_at({0x02, 0x10, 0x05}, 3, "instruction");  // no end or trunc
  expect_truncated_at({0x02}, 1, "instruction");
}

TEST(CbfDecode, RepeatAtTheLimitIsAccepted) {
  auto bt = decode(std::vector<uint8_t>{0x02, 0x10, 0x7f, 0x8a, 0x10, 0x00, 0x01, 0x00});
  ASSERT_TRUE(bt);
  EXPECT_FALSE(bt->problem);
}

TEST(CbfDecode, BadInfoByteYieldsNoFrames) {
  for (uint8_t info : {uint8_t{0x03}, uint8_t{0x04}, uint8_t{0x06}, uint8_t{0xff}}) {
    auto bt = decode(std::vector<uint8_t>{info, 0x10, 0x01, 0x00});
    ASSERT_FALSE(bt) << int(info);
    EXPECT_EQ(bt.error().offset, 0u);
    EXPECT_EQ(bt.error().section, "CBF");
  }
  auto empty = decode(std::vector<uint8_t>{});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().field, "info");
}

TEST(CbfDecode, StreamSplitsConcatenatedRecords) {
  std::vector<uint8_t> b{0x02, 0x10, 0x05, 0x00};  // pc 5, end
  b.insert(b.end(), kMixed.begin(), kMixed.end());
  b.insert(b.end(), {0x01, 0x10, 0x07, 0x01});  // 32-bit: pc 7, trunc
  b.insert(b.end(), {0x00, 0x10});               // 16-bit record cut short
  auto recs = decode_stream(b);
  ASSERT_EQ(recs.size(), 4u);
  ASSERT_TRUE(recs[0] && recs[1] && recs[2] && recs[3]);
  EXPECT_EQ(recs[0]->runs, (Runs{run(K::ProgramCounter, 5)}));
  EXPECT_EQ(frame_count(*recs[1]), 19u);
  EXPECT_EQ(recs[2]->word_size, WordSize::Bits32);
  EXPECT_EQ(recs[2]->runs, (Runs{run(K::ProgramCounter, 7), run(K::Truncated, 0)}));
  ASSERT_TRUE(recs[3]->problem);
  EXPECT_EQ(recs[3]->problem->offset, 4u + kMixed.size() + 4 + 2);  // whole-buffer offset
}

TEST(CbfDecode, StreamStopsAtBadInfoByte) {
  auto recs = decode_stream(std::vector<uint8_t>{0x02, 0x00, 0x07, 0x02, 0x00});
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_TRUE(recs[0]);
  ASSERT_FALSE(recs[1]);
  EXPECT_EQ(recs[1].error().offset, 2u);
}

}  // namespace
}  // namespace unwindkit::cbf
