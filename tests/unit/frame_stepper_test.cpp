// The frame stepper (walker.h) with rule sources a front end adds: hand-built x86_64 stacks
// and rules, so every expected value follows from the psABI arithmetic of the stack as built.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "fake_memory.h"
#include "unwindkit/unwind/walker.h"

namespace unwindkit::unwind {
namespace {

using test::FakeMemory;
namespace x = reg::x86_64;

// A front end's own source: fixed rules by function range; remembers every lookup address.
class TableSource final : public RuleSource {
 public:
  explicit TableSource(Source kind) : kind_(kind) {}
  Source kind() const override { return kind_; }
  Result<std::optional<UnwindRule>> rule(const RuleQuery& q) const override {
    lookups.push_back(q.address.lookup_address());
    for (const UnwindRule& r : rules)
      if (q.address.lookup_address() >= r.func_start && q.address.lookup_address() < r.func_end)
        return std::optional<UnwindRule>(r);
    return std::optional<UnwindRule>();
  }
  std::vector<UnwindRule> rules;
  mutable std::vector<uint64_t> lookups;

 private:
  Source kind_;
};

// [start, end): CFA = rsp + cfa_offset, RA at CFA - 8 (or undefined), rbp unchanged.
UnwindRule sp_rule(uint64_t start, uint64_t end, int64_t cfa_offset, bool signal = false,
                   bool outermost = false) {
  UnwindRule r;
  r.arch = Arch::X86_64;
  r.cfa = {CfaRule::Kind::RegOffset, x::rsp, cfa_offset};
  r.ra = outermost ? RegRule::undefined() : RegRule::at_cfa(-8);
  r.signal_frame = signal;
  r.func_start = start;
  r.func_end = end;
  return r;
}

RegisterSet at(uint64_t pc, uint64_t sp) {
  RegisterSet r(Arch::X86_64);
  r.set_pc(pc);
  r.set(x::rsp, sp);
  r.set(x::rbp, 0x9000);
  return r;
}

// Frame 0 at 0x1000 with its return address at 0x7008 (CFA 0x7010) pointing at 0x2000, the
// first byte of B; A, just before B, ends with a larger frame (CFA = rsp + 32). B (CFA rsp+8)
// returns to C at 0x3005; C is outermost.
struct SignalStack {
  std::shared_ptr<TableSource> source = std::make_shared<TableSource>(Source::SFrame);
  FakeMemory mem;
  explicit SignalStack(bool signal) {
    source->rules = {sp_rule(0x1000, 0x1010, 16, signal), sp_rule(0x1ff0, 0x2000, 32),
                     sp_rule(0x2000, 0x2010, 8), sp_rule(0x3000, 0x3010, 8, false, true)};
    mem.put_word(0x7008, 0x2000);
    mem.put_word(0x7010, 0x3005);
  }
};

TEST(FrameStepper, CallerOfASignalFrameIsLookedUpAtItsPc) {
  SignalStack s(true);
  WalkOptions o;
  o.sources = {s.source};
  ModuleMap none;
  const Walk w = walk(at(0x1000, 0x7000), none, s.mem, o);
  ASSERT_EQ(w.frames.size(), 3u) << w.stop_reason;
  EXPECT_EQ(w.frames[1].pc(), 0x2000u);
  EXPECT_FALSE(w.frames[1].address.is_return_address());
  EXPECT_EQ(w.frames[1].cfa, 0x7018u);
  EXPECT_EQ(w.frames[2].pc(), 0x3005u);
  EXPECT_TRUE(w.frames[2].address.is_return_address());
  EXPECT_EQ(w.stop, StopKind::Outermost) << w.stop_reason;
  EXPECT_EQ(s.source->lookups, (std::vector<uint64_t>{0x1000, 0x2000, 0x3004}));
}

TEST(FrameStepper, CallerOfANormalFrameIsLookedUpAtTheCall) {
  SignalStack s(false);
  WalkOptions o;
  o.sources = {s.source};
  ModuleMap none;
  const Walk w = walk(at(0x1000, 0x7000), none, s.mem, o);
  // 0x1fff is A's: CFA 0x7030, its return address slot 0x7028 was never written.
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(s.source->lookups, (std::vector<uint64_t>{0x1000, 0x1fff}));
  EXPECT_EQ(w.stop, StopKind::NoUnwindInfo);
  EXPECT_NE(w.stop_reason.find("0x7028"), std::string::npos) << w.stop_reason;
}

// GDB drives the loop: frames it asks about one by one are recognised by (pc, sp).
TEST(FrameStepper, ADebuggerDrivenWalkKnowsTheCallersItComputed) {
  SignalStack s(true);
  WalkOptions o;
  o.sources = {s.source};
  ModuleMap none;
  FrameStepper stepper(none, s.mem, o);
  StepOutcome first = stepper.step(at(0x1000, 0x7000), true);
  ASSERT_EQ(first.kind, StepOutcome::Kind::Stepped);
  EXPECT_EQ(first.caller.sp(), 0x7010u);
  StepOutcome second = stepper.step(first.caller, false);
  EXPECT_FALSE(second.frame.address.is_return_address());
  // A frame the stepper did not compute (another sp) is at a return address.
  StepOutcome other = stepper.step(at(0x2000, 0x7100), false);
  EXPECT_TRUE(other.frame.address.is_return_address());
  EXPECT_EQ(s.source->lookups.back(), 0x1fffu);
}

TEST(FrameStepper, SourcesLeftToTheDebuggerAreNotStepped) {
  auto cfi = std::make_shared<TableSource>(Source::Cfi);
  cfi->rules = {sp_rule(0x1000, 0x1010, 16)};
  auto sframe = std::make_shared<TableSource>(Source::SFrame);
  sframe->rules = {sp_rule(0x1000, 0x1010, 16), sp_rule(0x2000, 0x2010, 8)};
  WalkOptions o;
  o.sources = {cfi, sframe};
  o.left_to_debugger = {Source::Cfi};
  ModuleMap none;
  FakeMemory mem;  // empty: a step would fail
  FrameStepper stepper(none, mem, o);
  StepOutcome covered = stepper.step(at(0x1000, 0x7000), true);
  EXPECT_EQ(covered.kind, StepOutcome::Kind::LeftToDebugger);
  EXPECT_EQ(covered.frame.source, Source::Cfi);
  EXPECT_TRUE(sframe->lookups.empty());
  StepOutcome ours = stepper.step(at(0x2005, 0x7000), false);
  EXPECT_NE(ours.kind, StepOutcome::Kind::LeftToDebugger);
  EXPECT_EQ(sframe->lookups, (std::vector<uint64_t>{0x2004}));
}

// The caller's CFA must be above its callee's: a rule that gives the same CFA again is
// passed over, even where it is not below the caller's own SP.
TEST(FrameStepper, CfaMustMoveUpFromTheCallee) {
  auto source = std::make_shared<TableSource>(Source::SFrame);
  source->rules = {sp_rule(0x1000, 0x1010, 16), sp_rule(0x2000, 0x2010, 0)};
  FakeMemory mem;
  mem.put_word(0x7008, 0x2005);
  WalkOptions o;
  o.sources = {source};
  ModuleMap none;
  FrameStepper stepper(none, mem, o);
  StepOutcome first = stepper.step(at(0x1000, 0x7000), true);
  ASSERT_EQ(first.kind, StepOutcome::Kind::Stepped);
  StepOutcome second = stepper.step(first.caller, false);
  EXPECT_EQ(second.kind, StepOutcome::Kind::Ended);
  ASSERT_EQ(second.frame.passed_over.size(), 1u);
  EXPECT_EQ(second.frame.passed_over[0].why, PassedOver::Why::Implausible);
}

}  // namespace
}  // namespace unwindkit::unwind
