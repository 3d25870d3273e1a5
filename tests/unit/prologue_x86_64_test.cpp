// The prologue analyzer on x86_64 code. Each function's bytes are what GNU as 2.40+ produced
// for the GCC-style assembly quoted beside them, and the expected saves are that assembly's
// CFI as readelf --debug-dump=frames-interp printed it (LOC, CFA and register columns; "u":
// unmentioned), at every row.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "prologue_support.h"

namespace {

using namespace unwindkit;
using test::saved_at;
using test::unchanged_at;
using Saved = std::map<uint16_t, int64_t>;
namespace r = reg::x86_64;

constexpr uint64_t kBase = 0x401000;

// f: -O2 shape, shrink-wrapped early return, remember/restore state around the epilogue.
//  0 endbr64 / 4 test %rdi,%rdi / 7 je .L5 / 9 push %r12 / b push %rbx / c sub $0x18,%rsp
// 10 mov %rdi,%rbx / 13 call g / 18 mov %rax,%r12 / 1b test %rax,%rax / 1e jne .L3
// 20 add $0x18,%rsp / 24 pop %rbx / 25 pop %r12 / 27 ret
// 28 .L3: mov %rbx,%rdi / 2b call g / 30 add $0x18,%rsp / 34 pop %rbx / 35 pop %r12 / 37 ret
// 38 .L5: xor %eax,%eax / 3a ret
const std::vector<uint8_t> kShrinkWrapped = {
    0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff, 0x74, 0x2f, 0x41, 0x54, 0x53, 0x48, 0x83, 0xec,
    0x18, 0x48, 0x89, 0xfb, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x49, 0x89, 0xc4, 0x48, 0x85, 0xc0,
    0x75, 0x08, 0x48, 0x83, 0xc4, 0x18, 0x5b, 0x41, 0x5c, 0xc3, 0x48, 0x89, 0xdf, 0xe8, 0x00,
    0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x18, 0x5b, 0x41, 0x5c, 0xc3, 0x31, 0xc0, 0xc3};

// readelf's table for f:
//   LOC  CFA     rbx   r12
//   0    rsp+8   u     u
//   b    rsp+16  u     c-16
//   c    rsp+24  c-24  c-16
//   10   rsp+48  c-24  c-16
//   24   rsp+24  c-24  c-16      (GCC emits no .cfi_restore for x86_64 pops)
//   25   rsp+16  c-24  c-16
//   27   rsp+8   c-24  c-16
//   28   rsp+48  c-24  c-16
//   34   rsp+24  c-24  c-16
//   35   rsp+16  c-24  c-16
//   37   rsp+8   c-24  c-16      (and so at .L5, reached from the entry: no claim is right)
std::vector<prologue::TableRow> shrink_wrapped_rows(uint64_t base = kBase) {
  return test::table(Arch::X86_64, base, kShrinkWrapped.size(),
                     {{0x0, r::rsp, 8}, {0xb, r::rsp, 16}, {0xc, r::rsp, 24},
                      {0x10, r::rsp, 48}, {0x24, r::rsp, 24}, {0x25, r::rsp, 16},
                      {0x27, r::rsp, 8}, {0x28, r::rsp, 48}, {0x34, r::rsp, 24},
                      {0x35, r::rsp, 16}, {0x37, r::rsp, 8}});
}

TEST(PrologueX86_64, PushesSaveAtTheirDepthAndBlocksRestoreTheBodyFrame) {
  const auto rows = shrink_wrapped_rows();
  const auto a = prologue::analyze(Arch::X86_64, kShrinkWrapped, kBase, rows);
  EXPECT_TRUE(a.fully_explained);
  EXPECT_FALSE(a.stopped) << a.stopped->to_string();
  EXPECT_EQ(a.regions.front().start, kBase);
  EXPECT_EQ(a.regions.back().end, kBase + kShrinkWrapped.size());
  for (size_t i = 1; i < a.regions.size(); ++i) EXPECT_EQ(a.regions[i].start, a.regions[i - 1].end);

  EXPECT_EQ(saved_at(a, kBase), Saved{});
  EXPECT_TRUE(unchanged_at(a, kBase));
  EXPECT_EQ(saved_at(a, kBase + 0xb), (Saved{{r::r12, -16}}));
  EXPECT_TRUE(unchanged_at(a, kBase + 0xb));
  const Saved both{{r::rbx, -24}, {r::r12, -16}};
  for (uint64_t loc : {0xc, 0x10, 0x13, 0x24, 0x28, 0x2b, 0x34}) {
    SCOPED_TRACE(loc);
    EXPECT_EQ(saved_at(a, kBase + loc), both);
    EXPECT_TRUE(unchanged_at(a, kBase + loc));  // rbp, r13-r15: never written
  }
  // After each pop the CFI still names the slot before a ret (before a tail call GCC
  // restores the rule instead): a popped register is claimed neither way.
  for (uint64_t loc : {0x25, 0x35}) {
    EXPECT_EQ(saved_at(a, kBase + loc), (Saved{{r::r12, -16}}));
    EXPECT_FALSE(unchanged_at(a, kBase + loc));
  }
  EXPECT_EQ(saved_at(a, kBase + 0x27), Saved{});
  // .L5 after a ret: the CFI still names the popped slots, which this path never wrote.
  EXPECT_EQ(saved_at(a, kBase + 0x38), Saved{});
  EXPECT_FALSE(unchanged_at(a, kBase + 0x38));
  EXPECT_EQ(a.at(kBase + kShrinkWrapped.size()), nullptr);
}

// The decoder keeps instructions it decoded before by their bytes (relative branches aside):
// the same code again, at its address and far from it, claims what readelf's table says, in
// as many regions, its branches (je, jne) followed to their targets there.
TEST(PrologueX86_64, CodeDecodedBeforeClaimsAsAtFirstSight) {
  const Saved both{{r::rbx, -24}, {r::r12, -16}};
  std::optional<size_t> regions;
  for (const uint64_t base : {kBase, kBase, kBase + 0x76543210, kBase}) {
    SCOPED_TRACE(base);
    const auto rows = shrink_wrapped_rows(base);
    const auto a = prologue::analyze(Arch::X86_64, kShrinkWrapped, base, rows);
    EXPECT_TRUE(a.fully_explained);
    ASSERT_FALSE(a.regions.empty());
    EXPECT_EQ(a.regions.front().start, base);
    EXPECT_EQ(a.regions.back().end, base + kShrinkWrapped.size());
    if (!regions) regions = a.regions.size();
    EXPECT_EQ(a.regions.size(), *regions);
    EXPECT_EQ(saved_at(a, base + 0xb), (Saved{{r::r12, -16}}));
    for (uint64_t loc : {0xc, 0x13, 0x28, 0x34}) EXPECT_EQ(saved_at(a, base + loc), both);
    EXPECT_EQ(saved_at(a, base + 0x38), Saved{});
    EXPECT_FALSE(unchanged_at(a, base + 0x38));
  }
}

// h: a frame-pointer frame with pushes the rows do not show, a mov save, lea/pop epilogue.
// 3b push %rbp / 3c mov %rsp,%rbp / 3f push %r15 / 41 push %rbx / 42 sub $0x10,%rsp
// 46 mov %r13,-0x28(%rbp) / 4a call g / 4f mov -0x28(%rbp),%r13 / 53 lea -0x10(%rbp),%rsp
// 57 pop %rbx / 58 pop %r15 / 5a pop %rbp / 5b ret
const std::vector<uint8_t> kFramePointer = {
    0x55, 0x48, 0x89, 0xe5, 0x41, 0x57, 0x53, 0x48, 0x83, 0xec, 0x10, 0x4c, 0x89,
    0x6d, 0xd8, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x4c, 0x8b, 0x6d, 0xd8, 0x48, 0x8d,
    0x65, 0xf0, 0x5b, 0x41, 0x5f, 0x5d, 0xc3};

TEST(PrologueX86_64, FramePointerFramePushesAndMovSaves) {
  // readelf: LOC CFA rbx rbp r13 r15 /  3b rsp+8 u u u u / 3c rsp+16 u c-16 u u /
  // 3f rbp+16 u c-16 u u / 42 rbp+16 c-32 c-16 u c-24 / 4a rbp+16 c-32 c-16 c-56 c-24 /
  // 5b rsp+8 c-32 c-16 c-56 c-24   (offsets from h = 0x3b)
  const auto rows = test::table(Arch::X86_64, kBase, kFramePointer.size(),
                                {{0x0, r::rsp, 8}, {0x1, r::rsp, 16}, {0x4, r::rbp, 16},
                                 {0x20, r::rsp, 8}});
  const auto a = prologue::analyze(Arch::X86_64, kFramePointer, kBase, rows);
  EXPECT_TRUE(a.fully_explained);
  EXPECT_EQ(saved_at(a, kBase + 0x1), (Saved{{r::rbp, -16}}));
  EXPECT_EQ(saved_at(a, kBase + 0x4), (Saved{{r::rbp, -16}}));
  EXPECT_EQ(saved_at(a, kBase + 0x7), (Saved{{r::rbx, -32}, {r::rbp, -16}, {r::r15, -24}}));
  const Saved all{{r::rbx, -32}, {r::rbp, -16}, {r::r13, -56}, {r::r15, -24}};
  EXPECT_EQ(saved_at(a, kBase + 0xf), all);
  EXPECT_EQ(saved_at(a, kBase + 0x14), all);
  EXPECT_TRUE(unchanged_at(a, kBase + 0x14));  // r12, r14
  EXPECT_EQ(saved_at(a, kBase + 0x1c), (Saved{{r::rbx, -32}, {r::rbp, -16}, {r::r15, -24}}));
  EXPECT_EQ(saved_at(a, kBase + 0x20), Saved{});  // all popped
}

TEST(PrologueX86_64, ARegisterWrittenBeforeItIsSavedIsNotClaimed) {
  // mov %rdi,%rbx / ret: the caller's rbx is gone, nothing says where; and since a jump
  // could reach the first instruction after that write, not even there.
  const std::vector<uint8_t> code = {0x48, 0x89, 0xfb, 0xc3};
  const auto a = prologue::analyze(Arch::X86_64, code, kBase,
                                   test::table(Arch::X86_64, kBase, code.size(), {{0, r::rsp, 8}}));
  EXPECT_TRUE(a.fully_explained);
  EXPECT_FALSE(unchanged_at(a, kBase));
  EXPECT_FALSE(unchanged_at(a, kBase + 3));
  EXPECT_EQ(saved_at(a, kBase + 3), Saved{});
}

TEST(PrologueX86_64, RowsTheCodeDoesNotExplainStopTheClaims) {
  auto rows = shrink_wrapped_rows();
  rows[2].rule.cfa.offset = 32;  // at 0xc the push of rbx made it 24
  const auto a = prologue::analyze(Arch::X86_64, kShrinkWrapped, kBase, rows);
  EXPECT_FALSE(a.fully_explained);
  ASSERT_TRUE(a.stopped);
  EXPECT_EQ(saved_at(a, kBase + 0x10), Saved{});
  EXPECT_FALSE(unchanged_at(a, kBase));  // nothing is unchanged in a function not explained
  EXPECT_EQ(a.regions.back().end, kBase + kShrinkWrapped.size());
}

TEST(PrologueX86_64, UndecodableBytesStopTheClaims) {
  // push %rbx, then 0x06 (push %es: invalid in 64-bit mode).
  const std::vector<uint8_t> code = {0x53, 0x06, 0xc3};
  const auto a = prologue::analyze(Arch::X86_64, code, kBase,
                                   test::table(Arch::X86_64, kBase, code.size(), {{0, r::rsp, 8}, {1, r::rsp, 16}}));
  ASSERT_TRUE(a.stopped);
  EXPECT_EQ(a.stopped->kind, ErrorKind::Unsupported);
  EXPECT_EQ(saved_at(a, kBase + 1), Saved{});
  EXPECT_FALSE(unchanged_at(a, kBase + 2));
}

TEST(PrologueX86_64, UnsortedAndStrayRowsAreHarmless) {
  auto rows = shrink_wrapped_rows();
  std::reverse(rows.begin(), rows.end());
  rows.push_back({kBase + 0x1000, kBase + 0x1008, {}});  // outside the function
  const auto a = prologue::analyze(Arch::X86_64, kShrinkWrapped, kBase, rows);
  EXPECT_TRUE(a.fully_explained);
  EXPECT_EQ(saved_at(a, kBase + 0x28), (Saved{{r::rbx, -24}, {r::r12, -16}}));
}

}  // namespace

namespace {

// Functions longer than prologue::detail::Instructions::kMaxKept instructions are decoded
// again by each walk instead of once: the claims must not depend on which.
TEST(PrologueX86_64, LongFunctionsClaimAsShortOnes) {
  for (size_t body : {size_t{8}, size_t{6000}}) {
    SCOPED_TRACE(body);
    // push %rbx, then `body` nops (made whole: GCC 16 takes an insert of them into a one-byte
    // vector for a write past its end, -Warray-bounds)
    std::vector<uint8_t> code(1 + body, 0x90);
    code[0] = 0x53;
    code.insert(code.end(), {0x5b, 0xc3, 0xff});  // pop %rbx; ret; an undecodable byte
    const uint64_t pop = 1 + body;
    const auto rows = test::table(Arch::X86_64, kBase, code.size(),
                                  {{0, r::rsp, 8}, {1, r::rsp, 16}, {pop + 1, r::rsp, 8}});
    const auto a = prologue::analyze(Arch::X86_64, code, kBase, rows);
    EXPECT_EQ(saved_at(a, kBase), Saved{});
    for (uint64_t loc : {uint64_t{1}, pop / 2, pop}) {
      SCOPED_TRACE(loc);
      EXPECT_EQ(saved_at(a, kBase + loc), (Saved{{r::rbx, -16}}));  // claimed before the stop
    }
    // The byte after `ret` decodes as nothing: the analysis stops there, naming it.
    ASSERT_TRUE(a.stopped);
    EXPECT_EQ(a.stopped->offset, pop + 2);
  }
}

}  // namespace
