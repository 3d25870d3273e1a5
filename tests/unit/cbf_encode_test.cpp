// CBF encoding: Swift's byte choices (vector round trip, hand-derived bytes from Swift's
// encoder rules) and fixed-seed property tests decode(encode(x)) == x.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "unwindkit/cbf/constants.h"
#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/encode.h"

namespace unwindkit::cbf {
namespace {

using K = FrameKind;
using Runs = std::vector<cbf::Run>;
using B = std::vector<uint8_t>;

Run run(K k, uint64_t v, uint64_t count = 1) { return Run{Frame{k, v}, count}; }

TEST(CbfEncode, MixedVectorRoundTripsExactly) {
  const B swift{0x02, 0x11, 0x10, 0x00, 0x20, 0x10, 0x21, 0xff, 0x00, 0x35,
                0x7f, 0xff, 0x00, 0x00, 0x10, 0xf0, 0x44, 0x61, 0x03, 0xe8,
                0x29, 0x20, 0x20, 0x80, 0x11, 0x10, 0x10, 0x88, 0x09, 0x01};
  auto bt = decode(swift);
  ASSERT_TRUE(bt);
  auto again = encode(bt->word_size, bt->runs);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(*again, swift);
}

TEST(CbfEncode, RepeatLimitVectorFramesEncodeRelativeOnATie) {
  // notes §4 vector 1 writes pc 0x7f absolute (18 7f). Swift's encoder takes the absolute
  // form only when strictly shorter; 0x7f is one byte either way, so it writes 10 7f.
  // The frames (and the rep bytes 8a 10 00 01) are what must survive.
  auto bt = decode(B{0x02, 0x18, 0x7f, 0x8a, 0x10, 0x00, 0x01, 0x00});
  ASSERT_TRUE(bt);
  auto again = encode(bt->word_size, bt->runs);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, (B{0x02, 0x10, 0x7f, 0x8a, 0x10, 0x00, 0x01, 0x00}));
}

TEST(CbfEncode, HandDerivedChoices) {
  // 0x80 needs two bytes either way as a positive value (00 80): relative.
  EXPECT_EQ(*encode(WordSize::Bits64, Runs{run(K::ProgramCounter, 0x80)}),
            (B{0x02, 0x11, 0x00, 0x80, 0x00}));
  // 0x1000 then 0x10: delta -0xff0 needs 2 bytes (f0 10), absolute 0x10 needs 1: absolute.
  EXPECT_EQ(*encode(WordSize::Bits64, Runs{run(K::ProgramCounter, 0x1000),
                                                       run(K::ReturnAddress, 0x10)}),
            (B{0x02, 0x11, 0x10, 0x00, 0x28, 0x10, 0x00}));
  // 32-bit 0xffffffff is the single byte ff (sign-extended).
  EXPECT_EQ(*encode(WordSize::Bits32, Runs{run(K::AsyncResumePoint, 0xffffffff)}),
            (B{0x01, 0x30, 0xff, 0x00}));
  // omit 31 inside, omit 32 outside (one byte 20); rep 8 inside (87), rep 9 outside (88 09).
  EXPECT_EQ(*encode(WordSize::Bits16, Runs{run(K::Omitted, 31), run(K::Omitted, 32)}),
            (B{0x00, 0x5e, 0x60, 0x20, 0x00}));
  EXPECT_EQ(*encode(WordSize::Bits16, Runs{run(K::ProgramCounter, 1, 9)}),
            (B{0x00, 0x10, 0x01, 0x87, 0x00}));
  EXPECT_EQ(*encode(WordSize::Bits16, Runs{run(K::ProgramCounter, 1, 10)}),
            (B{0x00, 0x10, 0x01, 0x88, 0x09, 0x00}));
  // Nothing after trunc; an empty list is info + end.
  EXPECT_EQ(*encode(WordSize::Bits64, Runs{run(K::Truncated, 0),
                                                       run(K::ProgramCounter, 1)}),
            (B{0x02, 0x01}));
  EXPECT_EQ(*encode(WordSize::Bits64, Runs{}), (B{0x02, 0x00}));
}

TEST(CbfEncode, RejectsWhatCbfCannotSay) {
  auto zero = encode(WordSize::Bits64, Runs{run(K::Omitted, 0)});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().field, "omit");
  auto wide = encode(WordSize::Bits16, Runs{run(K::ProgramCounter, 1),
                                                        run(K::ProgramCounter, 0x10000)});
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().offset, 1u);
}

// Random frame lists: addresses near each other (small deltas), far apart (absolute wins),
// negative deltas, omits of every size, repeat runs up to the decoder's limit.
Runs random_runs(std::mt19937_64& rng, WordSize ws) {
  const uint64_t mask = word_mask(ws);
  Runs runs;
  const size_t n = rng() % 40;
  uint64_t addr = rng() & mask;
  for (size_t i = 0; i < n; ++i) {
    Frame f;
    const unsigned pick = static_cast<unsigned>(rng() % 10);
    if (pick < 3) {
      addr = (addr + (rng() % 0x400) - 0x200) & mask;
    } else if (pick < 5) {
      addr = rng() & mask;
    } else if (pick < 6) {
      addr = (addr + (rng() & 0xffffff)) & mask;
    }
    if (pick == 9) {
      const unsigned shift = static_cast<unsigned>(rng() % 64);
      f = Frame{K::Omitted, std::max<uint64_t>(1, rng() >> shift)};
    } else {
      f = Frame{pick % 3 == 0 ? K::ProgramCounter
                              : (pick % 3 == 1 ? K::ReturnAddress : K::AsyncResumePoint),
                addr};
    }
    const unsigned r = static_cast<unsigned>(rng() % 8);
    const uint64_t count = r < 5 ? 1 : r < 7 ? 1 + rng() % 12 : 1 + rng() % (kMaxRepeat + 1);
    if (!runs.empty() && runs.back().frame == f) continue;  // keep each run within the limit
    runs.push_back(Run{f, count});
  }
  if (rng() % 4 == 0) append(runs, Frame{K::Truncated, 0});
  return runs;
}

TEST(CbfEncode, PropertyRoundTrip) {
  std::mt19937_64 rng(0x5eedcbf);
  for (int iter = 0; iter < 20000; ++iter) {
    const WordSize ws = static_cast<WordSize>(iter % 3);
    const Runs runs = random_runs(rng, ws);
    auto bytes = encode(ws, runs);
    ASSERT_TRUE(bytes) << bytes.error().to_string();
    auto bt = decode(*bytes);
    ASSERT_TRUE(bt) << iter;
    EXPECT_FALSE(bt->problem) << iter << ": " << bt->problem->to_string();
    ASSERT_EQ(bt->runs, runs) << "iteration " << iter;
    EXPECT_EQ(bt->encoded_size, bytes->size());
    // Re-encoding what the encoder wrote gives the same bytes (Swift-written data survives).
    auto again = encode(bt->word_size, bt->runs);
    ASSERT_TRUE(again);
    ASSERT_EQ(*again, *bytes) << "iteration " << iter;
  }
}

TEST(CbfEncode, PropertyRandomBytesReencodeToTheSameFrames) {
  std::mt19937_64 rng(0xcbfcbf);
  for (int iter = 0; iter < 20000; ++iter) {
    B b(1 + rng() % 24);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    b[0] &= 0x03;  // mostly valid info bytes, so instructions get exercised
    auto bt = decode(b);
    if (!bt) continue;
    ASSERT_LE(bt->encoded_size, b.size());
    auto bytes = encode(bt->word_size, bt->runs);
    if (!bytes) continue;  // e.g. an omit of 0 frames read from an external count
    auto back = decode(*bytes);
    ASSERT_TRUE(back);
    ASSERT_EQ(back->runs, bt->runs) << "iteration " << iter;
  }
}

}  // namespace
}  // namespace unwindkit::cbf
