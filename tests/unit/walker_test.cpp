// The walker on hand-built x86_64 stacks (no modules: only the frame-pointer source can
// answer) and on a module built from a real gcc binary's CFI. Expected frames follow from
// the stacks as built: each frame record is {saved rbp, return address} (psABI).
#include "unwindkit/unwind/walker.h"

#include <gtest/gtest.h>

#include "fake_memory.h"

namespace unwindkit::unwind {
namespace {

using test::FakeMemory;
namespace x = reg::x86_64;

WalkOptions fp_only() {
  WalkOptions o;
  o.sources = builtin_sources({Source::FramePointer});
  return o;
}

// A chain of frame records at `fps`, returning to `ras`; the last record's saved rbp is 0.
FakeMemory chain(const std::vector<uint64_t>& fps, const std::vector<uint64_t>& ras) {
  FakeMemory mem;
  for (size_t i = 0; i < fps.size(); ++i) {
    mem.put_word(fps[i], i + 1 < fps.size() ? fps[i + 1] : 0);
    mem.put_word(fps[i] + 8, ras[i]);
  }
  return mem;
}

RegisterSet start(uint64_t pc, uint64_t sp, uint64_t fp) {
  RegisterSet r(Arch::X86_64);
  r.set_pc(pc);
  r.set(x::rsp, sp);
  r.set(x::rbp, fp);
  return r;
}

TEST(Walker, FollowsFramePointerChainToItsEnd) {
  const auto mem = chain({0x7f00, 0x7f40, 0x7f80}, {0x401111, 0x402222, 0x403333});
  ModuleMap none;
  const auto w = walk(start(0x400000, 0x7ef0, 0x7f00), none, mem, fp_only());
  ASSERT_EQ(w.frames.size(), 4u) << w.stop_reason;
  EXPECT_EQ(w.frames[0].pc(), 0x400000u);
  EXPECT_EQ(w.frames[1].pc(), 0x401111u);
  EXPECT_EQ(w.frames[2].pc(), 0x402222u);
  EXPECT_EQ(w.frames[3].pc(), 0x403333u);
  EXPECT_EQ(w.frames[0].cfa, 0x7f10u);
  EXPECT_EQ(w.frames[2].cfa, 0x7f90u);
  EXPECT_EQ(w.frames[0].source, Source::FramePointer);
  EXPECT_FALSE(w.frames[3].source);
  EXPECT_EQ(w.stop, StopKind::FramePointerEnd) << w.stop_reason;
  for (size_t i = 0; i < w.frames.size(); ++i) EXPECT_EQ(w.frames[i].index, i);
}

TEST(Walker, ZeroReturnAddressEnds) {
  const auto mem = chain({0x7f00, 0x7f40}, {0x401111, 0});
  ModuleMap none;
  const auto w = walk(start(0x400000, 0x7ef0, 0x7f00), none, mem, fp_only());
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.stop, StopKind::ZeroReturnAddress) << w.stop_reason;
}

TEST(Walker, FramePointerChainMustGoUp) {
  // The saved rbp points below the current frame: not a frame-pointer chain.
  FakeMemory mem;
  mem.put_word(0x7f00, 0x7e00);
  mem.put_word(0x7f08, 0x401111);
  ModuleMap none;
  const auto w = walk(start(0x400000, 0x7ef0, 0x7f00), none, mem, fp_only());
  ASSERT_EQ(w.frames.size(), 1u) << w.stop_reason;
  EXPECT_EQ(w.stop, StopKind::NoUnwindInfo);
  EXPECT_NE(w.stop_reason.find("not above"), std::string::npos) << w.stop_reason;
}

TEST(Walker, CfaBelowSpIsRejected) {
  // rbp below rsp cannot be this frame's base: the CFA would lie below the stack pointer.
  const auto mem = chain({0x7f00, 0x7f40}, {0x401111, 0x402222});
  ModuleMap none;
  const auto w = walk(start(0x400000, 0x8000, 0x7f00), none, mem, fp_only());
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_NE(w.stop_reason.find("below SP"), std::string::npos) << w.stop_reason;
}

TEST(Walker, DepthBound) {
  // 100 well-formed records; the bound stops the walk first.
  std::vector<uint64_t> fps, ras;
  for (uint64_t i = 0; i < 100; ++i) {
    fps.push_back(0x10000 + i * 0x20);
    ras.push_back(0x400000 + i);
  }
  const auto mem = chain(fps, ras);
  ModuleMap none;
  auto o = fp_only();
  o.max_depth = 10;
  const auto w = walk(start(0x3fffff, 0x10000 - 0x10, 0x10000), none, mem, o);
  EXPECT_EQ(w.frames.size(), 10u);
  EXPECT_EQ(w.stop, StopKind::DepthLimit);
}

TEST(Walker, UnreadableStackStopsWithTheAddress) {
  FakeMemory mem;  // nothing readable
  ModuleMap none;
  const auto w = walk(start(0x400000, 0x7ef0, 0x7f00), none, mem, fp_only());
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_EQ(w.stop, StopKind::NoUnwindInfo);
  EXPECT_NE(w.stop_reason.find("stack+0x7f00"), std::string::npos) << w.stop_reason;
}

TEST(Walker, NoPcNoFrames) {
  RegisterSet r(Arch::X86_64);
  FakeMemory mem;
  ModuleMap none;
  const auto w = walk(r, none, mem);
  EXPECT_TRUE(w.frames.empty());
}

TEST(Walker, FramePointerRuleIsTheFrameRecord) {
  // x86_64 psABI `push %rbp; mov %rsp,%rbp` and the AAPCS64 frame record {x29, x30}.
  auto x64 = frame_pointer_rule(Arch::X86_64);
  ASSERT_TRUE(x64);
  EXPECT_EQ(x64->cfa, (CfaRule{CfaRule::Kind::RegOffset, x::rbp, 16}));
  EXPECT_EQ(x64->ra, RegRule::at_cfa(-8));
  EXPECT_EQ(x64->fp, RegRule::at_cfa(-16));
  auto a64 = frame_pointer_rule(Arch::AArch64);
  ASSERT_TRUE(a64);
  EXPECT_EQ(a64->cfa.reg, reg::aarch64::x29);
  EXPECT_FALSE(frame_pointer_rule(Arch::S390x));
}

}  // namespace
}  // namespace unwindkit::unwind
