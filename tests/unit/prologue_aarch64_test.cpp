// The prologue analyzer on AArch64 code. The bytes are what GNU as (aarch64-linux-gnu)
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
namespace r = reg::aarch64;

constexpr uint64_t kBase = 0x400000;

// 0 stp x29,x30,[sp,#-48]! / 4 mov x29,sp / 8 stp x19,x20,[sp,#16] / c str d8,[sp,#32]
// 10 mov x19,x0 / 14 bl g / 18 cbz x0,2c / 1c ldr d8,[sp,#32] / 20 ldp x19,x20,[sp,#16]
// 24 ldp x29,x30,[sp],#48 / 28 ret / 2c mov x0,x19 / 30 bl g / 34 ldr d8,[sp,#32]
// 38 ldp x19,x20,[sp,#16] / 3c ldp x29,x30,[sp],#48 / 40 ret   (little-endian words)
const std::vector<uint8_t> kFunction = {
    0xfd, 0x7b, 0xbd, 0xa9, 0xfd, 0x03, 0x00, 0x91, 0xf3, 0x53, 0x01, 0xa9, 0xe8, 0x13, 0x00,
    0xfd, 0xf3, 0x03, 0x00, 0xaa, 0x00, 0x00, 0x00, 0x94, 0xa0, 0x00, 0x00, 0xb4, 0xe8, 0x13,
    0x40, 0xfd, 0xf3, 0x53, 0x41, 0xa9, 0xfd, 0x7b, 0xc3, 0xa8, 0xc0, 0x03, 0x5f, 0xd6, 0xe0,
    0x03, 0x13, 0xaa, 0x00, 0x00, 0x00, 0x94, 0xe8, 0x13, 0x40, 0xfd, 0xf3, 0x53, 0x41, 0xa9,
    0xfd, 0x7b, 0xc3, 0xa8, 0xc0, 0x03, 0x5f, 0xd6};

// readelf:  LOC CFA    x19  x20  x29  ra   v8
//           0   sp+0   u    u    u    u    u
//           4   sp+48  u    u    c-48 c-40 u
//           c   sp+48  c-32 c-24 c-48 c-40 u
//           10  sp+48  c-32 c-24 c-48 c-40 c-16
//           28  sp+0   u    u    u    u    u
//           2c  sp+48  c-32 c-24 c-48 c-40 c-16
//           40  sp+0   u    u    u    u    u
std::vector<prologue::TableRow> rows() {
  return test::table(Arch::AArch64, kBase, kFunction.size(),
                     {{0x0, r::sp, 0}, {0x4, r::sp, 48}, {0x28, r::sp, 0}, {0x2c, r::sp, 48},
                      {0x40, r::sp, 0}});
}

TEST(PrologueAArch64, StoresPairsAndRestores) {
  const auto a = prologue::analyze(Arch::AArch64, kFunction, kBase, rows());
  EXPECT_TRUE(a.fully_explained);
  EXPECT_FALSE(a.stopped) << a.stopped->to_string();
  const Saved none{};
  const Saved frame{{r::x29, -48}};
  const Saved body{{19, -32}, {20, -24}, {r::x29, -48}, {r::d8, -16}};
  EXPECT_EQ(saved_at(a, kBase + 0x0), none);
  EXPECT_EQ(saved_at(a, kBase + 0x4), frame);
  EXPECT_EQ(saved_at(a, kBase + 0xc), (Saved{{19, -32}, {20, -24}, {r::x29, -48}}));
  for (uint64_t loc : {0x10, 0x14, 0x18, 0x2c, 0x30}) {
    SCOPED_TRACE(loc);
    EXPECT_EQ(saved_at(a, kBase + loc), body);
  }
  // At the rets every register is restored, which the CFI says after the last load only:
  // claimed neither way.
  EXPECT_EQ(saved_at(a, kBase + 0x28), none);
  EXPECT_EQ(saved_at(a, kBase + 0x40), none);
  EXPECT_FALSE(unchanged_at(a, kBase + 0x28));
  for (uint64_t loc : {0x0, 0x4, 0xc, 0x10, 0x2c}) {
    SCOPED_TRACE(loc);
    EXPECT_TRUE(unchanged_at(a, kBase + loc));  // x21-x28, d9-d15: never written
  }
}

TEST(PrologueAArch64, FramePointerBasedRowsAndOffsetStores) {
  // stp x29,x30,[sp,#-32]! / mov x29,sp / str x21,[x29,#16] / sub sp,sp,#0x1,lsl #12
  // add sp,sp,#0x1,lsl #12 / ldr x21,[x29,#16] / ldp x29,x30,[sp],#32 / ret
  // readelf, with GCC's directives (.cfi_def_cfa_register 29 after the mov, .cfi_offset 21
  // after the str, .cfi_restore after the ldp): 0 sp+0 / 4 sp+32 x29 c-32 / 8 x29+32 /
  // c x29+32 x21 c-16 / 1c sp+0, all u.
  const std::vector<uint8_t> code = {
      0xfd, 0x7b, 0xbe, 0xa9, 0xfd, 0x03, 0x00, 0x91, 0xb5, 0x0b, 0x00, 0xf9, 0xff, 0x07, 0x40,
      0xd1, 0xff, 0x07, 0x40, 0x91, 0xb5, 0x0b, 0x40, 0xf9, 0xfd, 0x7b, 0xc2, 0xa8, 0xc0, 0x03,
      0x5f, 0xd6};
  const auto t = test::table(Arch::AArch64, kBase, code.size(),
                             {{0x0, r::sp, 0}, {0x4, r::sp, 32}, {0x8, r::x29, 32}, {0x1c, r::sp, 0}});
  const auto a = prologue::analyze(Arch::AArch64, code, kBase, t);
  EXPECT_TRUE(a.fully_explained) << a.stopped->to_string();
  EXPECT_EQ(saved_at(a, kBase + 0xc), (Saved{{21, -16}, {r::x29, -32}}));
  EXPECT_EQ(saved_at(a, kBase + 0x14), (Saved{{21, -16}, {r::x29, -32}}));
  EXPECT_EQ(saved_at(a, kBase + 0x1c), Saved{});
}

TEST(PrologueAArch64, UnmodelledStackPointerWriteStopsAtTheNextRow) {
  // stp x29,x30,[sp,#-16]! / mov x9,#32 / sub sp,sp,x9 / ret  with a row at 0xc saying sp+48:
  // the code cannot tell SP there.
  const std::vector<uint8_t> code = {0xfd, 0x7b, 0xbf, 0xa9, 0x09, 0x04, 0x80, 0xd2,
                                     0xff, 0x63, 0x29, 0xcb, 0xc0, 0x03, 0x5f, 0xd6};
  const auto t = test::table(Arch::AArch64, kBase, code.size(),
                             {{0x0, r::sp, 0}, {0x4, r::sp, 16}, {0xc, r::sp, 48}});
  const auto a = prologue::analyze(Arch::AArch64, code, kBase, t);
  EXPECT_FALSE(a.fully_explained);
  EXPECT_TRUE(a.stopped);
  EXPECT_EQ(saved_at(a, kBase + 0x4), (Saved{{r::x29, -16}}));
  EXPECT_EQ(saved_at(a, kBase + 0xc), Saved{});
  EXPECT_FALSE(unchanged_at(a, kBase + 0x4));
}

TEST(PrologueAArch64, ShrinkWrappedSaveJoinsAtTheJumpTarget) {
  // 0 stp x29,x30,[sp,#-32]! / 4 mov x29,sp / 8 cbz x0,20 / c str x19,[sp,#16]
  // 10 mov x19,x0 / 14 bl g / 18 mov x0,x19 / 1c ldr x19,[sp,#16]
  // 20 ldp x29,x30,[sp],#32 / 24 ret
  // readelf: 0 sp+0 / 4 sp+32 x29 c-32 / 10 sp+32 x19 c-16 x29 c-32 / 20 sp+32 x19 u x29 c-32
  //          / 24 sp+0, all u.
  const std::vector<uint8_t> code = {
      0xfd, 0x7b, 0xbe, 0xa9, 0xfd, 0x03, 0x00, 0x91, 0xc0, 0x00, 0x00, 0xb4, 0xf3, 0x0b,
      0x00, 0xf9, 0xf3, 0x03, 0x00, 0xaa, 0x00, 0x00, 0x00, 0x94, 0xe0, 0x03, 0x13, 0xaa,
      0xf3, 0x0b, 0x40, 0xf9, 0xfd, 0x7b, 0xc2, 0xa8, 0xc0, 0x03, 0x5f, 0xd6};
  const auto t = test::table(Arch::AArch64, kBase, code.size(),
                             {{0x0, r::sp, 0}, {0x4, r::sp, 32}, {0x24, r::sp, 0}});
  const auto a = prologue::analyze(Arch::AArch64, code, kBase, t);
  EXPECT_TRUE(a.fully_explained);
  EXPECT_EQ(saved_at(a, kBase + 0x8), (Saved{{r::x29, -32}}));
  EXPECT_TRUE(unchanged_at(a, kBase + 0x8));
  EXPECT_EQ(saved_at(a, kBase + 0x14), (Saved{{19, -16}, {r::x29, -32}}));
  EXPECT_TRUE(unchanged_at(a, kBase + 0x14));
  // At 0x20 the paths from 0x8 (x19 never saved) and 0x1c (x19 restored) meet: no claim
  // for x19 there, so none of "unchanged" either.
  EXPECT_EQ(saved_at(a, kBase + 0x20), (Saved{{r::x29, -32}}));
  EXPECT_FALSE(unchanged_at(a, kBase + 0x20));
}

TEST(PrologueAArch64, RecursiveCallIsNoJumpIntoTheFunction) {
  // GCC -O2 (tests/programs/deep_recursion.c's recurse, linked): 0 stp x19,x20,[sp,#-48]!
  // / 4 add x20,sp,#32 / 8 str x30,[sp,#16] / c cbnz w0,30 / ... / 28 ldp x19,x20,[sp],#48
  // / 2c ret / 30 mov w19,w0 / 34 sub w0,w0,#1 / 38 bl 0 (itself) / ... / 48 ldp / 50 ret.
  // readelf: 0 sp+0 / 4 sp+48 x19 c-48 x20 c-40 / c ... ra c-32 / 2c sp+0 / 30 sp+48
  // x19 c-48 x20 c-40 ra c-32 / 4c sp+0. The `bl` to the function's own start returns to
  // 0x3c: it must not meet the entry's state (x19, x20 the caller's) with the saved one.
  const std::vector<uint8_t> code = {
      0xf3, 0x53, 0xbd, 0xa9, 0xf4, 0x83, 0x00, 0x91, 0xfe, 0x0b, 0x00, 0xf9, 0x20, 0x01,
      0x00, 0x35, 0x01, 0x00, 0x00, 0x90, 0x22, 0x00, 0x80, 0x52, 0xfe, 0x0b, 0x40, 0xf9,
      0x00, 0x00, 0x80, 0x52, 0x21, 0x00, 0x40, 0xf9, 0x22, 0x00, 0x00, 0xb9, 0xf3, 0x53,
      0xc3, 0xa8, 0xc0, 0x03, 0x5f, 0xd6, 0xf3, 0x03, 0x00, 0x2a, 0x00, 0x04, 0x00, 0x51,
      0xf2, 0xff, 0xff, 0x97, 0x73, 0x0e, 0x00, 0x12, 0xfe, 0x0b, 0x40, 0xf9, 0x81, 0xca,
      0x73, 0x38, 0xf3, 0x53, 0xc3, 0xa8, 0x20, 0x00, 0x00, 0x0b, 0xc0, 0x03, 0x5f, 0xd6};
  const auto t = test::table(Arch::AArch64, kBase, code.size(),
                             {{0x0, r::sp, 0}, {0x4, r::sp, 48}, {0x2c, r::sp, 0}, {0x30, r::sp, 48},
                              {0x4c, r::sp, 0}});
  const auto a = prologue::analyze(Arch::AArch64, code, kBase, t);
  EXPECT_TRUE(a.fully_explained);
  EXPECT_TRUE(unchanged_at(a, kBase));
  EXPECT_EQ(saved_at(a, kBase + 0x38), (Saved{{19, -48}, {20, -40}}));
  EXPECT_TRUE(unchanged_at(a, kBase + 0x38));
}

TEST(PrologueAArch64, LandingPadAfterACallThatDoesNotReturn) {
  // GCC's shape for a cleanup (sframe::dump's, -O2): a landing pad follows a call that does
  // not return, and is reached from a call made before x19/x20 were saved, so it saves them
  // itself. 0 stp x29,x30,[sp,#-48]! / 4 mov x29,sp / 8 bl g (throws to 28)
  // / c stp x19,x20,[sp,#16] / 10 mov x19,x0 / 14 cbnz x0,24 / 18 ldp x19,x20,[sp,#16]
  // / 1c ldp x29,x30,[sp],#48 / 20 ret / 24 bl abort / 28 stp x19,x20,[sp,#16]
  // / 2c mov x19,x0 / 30 bl _Unwind_Resume.
  // readelf: 0 sp+0 / 4 sp+48 x29 c-48 ra c-40 / 10 x19 c-32 x20 c-24 / 1c x19 u x20 u
  // / 20 sp+0, all u / 24 sp+48 x19 c-32 x20 c-24 x29 c-48 ra c-40 / 28 x19 u x20 u
  // / 2c x19 c-32 x20 c-24. SFrame (as --gsframe): rows at 0, 4, 20, 24, 2c.
  const std::vector<uint8_t> code = {
      0xfd, 0x7b, 0xbd, 0xa9, 0xfd, 0x03, 0x00, 0x91, 0x00, 0x00, 0x00, 0x94, 0xf3, 0x53,
      0x01, 0xa9, 0xf3, 0x03, 0x00, 0xaa, 0x80, 0x00, 0x00, 0xb5, 0xf3, 0x53, 0x41, 0xa9,
      0xfd, 0x7b, 0xc3, 0xa8, 0xc0, 0x03, 0x5f, 0xd6, 0x00, 0x00, 0x00, 0x94, 0xf3, 0x53,
      0x01, 0xa9, 0xf3, 0x03, 0x00, 0xaa, 0x00, 0x00, 0x00, 0x94};
  const auto t = test::table(Arch::AArch64, kBase, code.size(),
                             {{0x0, r::sp, 0}, {0x4, r::sp, 48}, {0x20, r::sp, 0},
                              {0x24, r::sp, 48}, {0x2c, r::sp, 48}});
  const auto a = prologue::analyze(Arch::AArch64, code, kBase, t);
  const Saved body{{19, -32}, {20, -24}, {r::x29, -48}};
  EXPECT_EQ(saved_at(a, kBase + 0x10), body);
  EXPECT_EQ(saved_at(a, kBase + 0x24), body);
  // The pad's store of x19 and x20 into their own slots shows they were not saved on the
  // way in: the CFI has them the caller's there.
  EXPECT_EQ(saved_at(a, kBase + 0x28), (Saved{{r::x29, -48}}));
  EXPECT_FALSE(unchanged_at(a, kBase + 0x28));
}

}  // namespace
