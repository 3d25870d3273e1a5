// The stepper on hand-built stacks. Expected values follow from the psABI meaning of each
// rule (x86_64: CFA = SP before the call, RA at CFA-8; s390x: caller SP = CFA-160).
#include "unwindkit/stepper.h"

#include <gtest/gtest.h>

#include "fake_memory.h"

namespace unwindkit {
namespace {

using test::FakeMemory;
namespace x = reg::x86_64;
namespace a64 = reg::aarch64;

UnwindRule x86_rule(CfaRule cfa, RegRule ra, RegRule fp) {
  UnwindRule r;
  r.arch = Arch::X86_64;
  r.cfa = cfa;
  r.ra = ra;
  r.fp = fp;
  return r;
}

RegisterSet x86_regs(uint64_t pc, uint64_t sp, uint64_t fp) {
  RegisterSet regs(Arch::X86_64);
  regs.set_pc(pc);
  regs.set(x::rsp, sp);
  regs.set(x::rbp, fp);
  return regs;
}

TEST(Stepper, FramePointerFrameRecoversCallerRegisters) {
  // After `push %rbp; mov %rsp,%rbp`: CFA = rbp+16, RA at CFA-8, saved rbp at CFA-16.
  FakeMemory mem;
  mem.put_word(0x7000, 0x7100);    // saved rbp
  mem.put_word(0x7008, 0x401234);  // return address
  RegisterSet regs = x86_regs(0x401100, 0x6ff0, 0x7000);
  regs.set(x::rbx, 0x1111);  // callee-saved: carried into the caller
  regs.set(x::rax, 0x2222);  // scratch: unknown in the caller
  auto rule = x86_rule({CfaRule::Kind::RegOffset, x::rbp, 16}, RegRule::at_cfa(-8),
                       RegRule::at_cfa(-16));
  rule.unlisted = Unlisted::Unchanged;  // as CFI states it: every save is listed
  auto r = step(rule, regs, mem);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->cfa, 0x7010u);
  EXPECT_FALSE(r->outermost);
  EXPECT_EQ(r->caller.pc(), 0x401234u);
  EXPECT_EQ(r->caller.sp(), 0x7010u);
  EXPECT_EQ(r->caller.fp(), 0x7100u);
  EXPECT_EQ(r->caller.get(x::rbx), 0x1111u);
  EXPECT_FALSE(r->caller.known(x::rax));
}

TEST(Stepper, SavedRegistersAndUndefined) {
  FakeMemory mem;
  mem.put_word(0x1018, 0x400500);  // RA at CFA-8
  mem.put_word(0x1010, 0xabc);     // r12 at CFA-16
  RegisterSet regs = x86_regs(0x400100, 0x1000, 0x5555);
  regs.set(x::r12, 0x1);
  regs.set(x::r13, 0x2);
  auto rule = x86_rule({CfaRule::Kind::RegOffset, x::rsp, 32}, RegRule::at_cfa(-8),
                       RegRule::unchanged());
  rule.saved = {{x::r12, RegRule::at_cfa(-16)}, {x::r13, RegRule::undefined()}};
  auto r = step(rule, regs, mem);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->caller.get(x::r12), 0xabcu);
  EXPECT_FALSE(r->caller.known(x::r13));
  EXPECT_EQ(r->caller.fp(), 0x5555u);  // unchanged
  EXPECT_EQ(r->caller.sp(), 0x1020u);
}

TEST(Stepper, UnreadableStackIsAnErrorNamingAddressAndField) {
  FakeMemory mem;  // nothing readable
  const auto rule = x86_rule({CfaRule::Kind::RegOffset, x::rsp, 8}, RegRule::at_cfa(-8),
                             RegRule::unchanged());
  auto r = step(rule, x86_regs(0x400100, 0x1000, 0), mem);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().section, "stack");
  EXPECT_EQ(r.error().offset, 0x1000u);
  EXPECT_EQ(r.error().field, "ra");
  EXPECT_EQ(r.error().kind, ErrorKind::UnreadableMemory);
}

TEST(Stepper, DerefCfaAsInSignalTrampoline) {
  // __restore_rt: CFA = *(rsp + 160), every register at rsp + its ucontext offset.
  FakeMemory mem;
  mem.put_word(0x2000 + 160, 0x9000);    // interrupted rsp
  mem.put_word(0x2000 + 168, 0x401777);  // interrupted rip
  mem.put_word(0x2000 + 120, 0x8888);    // interrupted rbp
  mem.put_word(0x2000 + 88, 0x42);       // interrupted rax (scratch, still recovered)
  auto rule = x86_rule({CfaRule::Kind::DerefRegOffset, x::rsp, 160}, RegRule::at_reg(x::rsp, 168),
                       RegRule::at_reg(x::rsp, 120));
  rule.saved = {{x::rsp, RegRule::at_reg(x::rsp, 160)}, {x::rax, RegRule::at_reg(x::rsp, 88)}};
  rule.signal_frame = true;
  auto r = step(rule, x86_regs(0x7ffff7e1a050, 0x2000, 0x1), mem);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->cfa, 0x9000u);
  EXPECT_EQ(r->caller.pc(), 0x401777u);
  EXPECT_EQ(r->caller.sp(), 0x9000u);
  EXPECT_EQ(r->caller.fp(), 0x8888u);
  EXPECT_EQ(r->caller.get(x::rax), 0x42u);
}

TEST(Stepper, RegisterRulesNeedTrustOutsideSpAndFp) {
  FakeMemory mem;
  RegisterSet regs = x86_regs(0x400100, 0x1000, 0x2000);
  regs.set(x::rbx, 0x401000);
  // RA in rbx (no real compiler does this on x86_64, but the rule model allows it).
  auto rule = x86_rule({CfaRule::Kind::RegOffset, x::rsp, 8}, RegRule::in_reg(x::rbx),
                       RegRule::unchanged());
  auto untrusted = step(rule, regs, mem);
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error().field, "ra");
  StepOptions trust;
  trust.trust_all_registers = true;
  auto trusted = step(rule, regs, mem, trust);
  ASSERT_TRUE(trusted) << trusted.error().to_string();
  EXPECT_EQ(trusted->caller.pc(), 0x401000u);
  // CFA from a register other than SP/FP: only with trust.
  rule.ra = RegRule::at_cfa(-8);
  rule.cfa = {CfaRule::Kind::RegOffset, x::r10, 8};
  regs.set(x::r10, 0x3000);
  EXPECT_FALSE(step(rule, regs, mem));
}

TEST(Stepper, OutermostStopsWithoutReadingRa) {
  FakeMemory mem;
  auto rule = x86_rule({CfaRule::Kind::RegOffset, x::rsp, 8}, RegRule::undefined(),
                       RegRule::unchanged());
  auto r = step(rule, x86_regs(0x400100, 0x1000, 0), mem);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->outermost);
  EXPECT_FALSE(r->caller.pc());
}

TEST(Stepper, AArch64LeafAndPacStripping) {
  // AAPCS64 leaf: CFA = sp, RA still in x30 (signed with PAC: top bits hold the signature).
  FakeMemory mem;
  RegisterSet regs(Arch::AArch64);
  regs.set_pc(0x400800);
  regs.set(a64::sp, 0xfff0);
  regs.set(a64::x30, 0x002a000000400a10ull);
  regs.set(72, 0x3ff0000000000000ull);  // d8: callee-saved
  UnwindRule rule;
  rule.arch = Arch::AArch64;
  rule.cfa = {CfaRule::Kind::RegOffset, a64::sp, 0};
  rule.ra = RegRule::in_reg(a64::x30);
  rule.ra_mangled = true;
  rule.unlisted = Unlisted::Unchanged;
  StepOptions opts;
  opts.trust_all_registers = true;
  auto r = step(rule, regs, mem, opts);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->caller.pc(), 0x400a10u);
  EXPECT_EQ(r->caller.sp(), 0xfff0u);
  EXPECT_EQ(r->caller.get(72), 0x3ff0000000000000ull);
  EXPECT_FALSE(r->caller.known(a64::x30));  // the link register is not callee-saved
}

TEST(Stepper, S390xBigEndianCallerSpIsCfaMinus160) {
  // s390x ELF ABI: CFA = caller SP + 160, r14 (RA) saved in the register save area.
  FakeMemory mem(Endian::Big);
  const uint64_t sp = 0x10000, cfa = sp + 160 + 160;
  mem.put_word(cfa - 160 + 112, 0x1000abcd);  // r14 slot of the caller's save area
  RegisterSet regs(Arch::S390x);
  regs.set_pc(0x1000a000);
  regs.set(reg::s390x::r15, sp);
  UnwindRule rule;
  rule.arch = Arch::S390x;
  rule.cfa = {CfaRule::Kind::RegOffset, reg::s390x::r15, 320};
  rule.ra = RegRule::at_cfa(-160 + 112);
  rule.sp_from_cfa = -160;
  StepOptions opts;
  opts.endian = Endian::Big;
  auto r = step(rule, regs, mem, opts);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->caller.pc(), 0x1000abcdu);
  EXPECT_EQ(r->caller.sp(), cfa - 160);
}

TEST(Stepper, MissingRegisterIsAnError) {
  FakeMemory mem;
  RegisterSet regs(Arch::X86_64);
  regs.set_pc(0x1);
  const auto rule = x86_rule({CfaRule::Kind::RegOffset, x::rsp, 8}, RegRule::at_cfa(-8),
                             RegRule::unchanged());
  auto r = step(rule, regs, mem);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "cfa");
  EXPECT_EQ(r.error().kind, ErrorKind::UnknownRegister);
}

TEST(Stepper, CalleeSavedListsFollowTheAbis) {
  // System V x86_64 psABI §3.2.1: rbx, rbp, r12-r15 (DWARF 3, 6, 12-15).
  const auto x64 = callee_saved_registers(Arch::X86_64);
  EXPECT_EQ(std::vector<uint16_t>(x64.begin(), x64.end()),
            (std::vector<uint16_t>{3, 6, 12, 13, 14, 15}));
  // AAPCS64: x19-x29 and d8-d15 (DWARF 72-79).
  const auto a = callee_saved_registers(Arch::AArch64);
  EXPECT_EQ(a.size(), 19u);
  EXPECT_EQ(a.front(), 19u);
  EXPECT_EQ(a.back(), 79u);
}

// Bare SFrame states CFA, RA and FP only: a callee-saved register nothing proves is unknown
// in the caller (a function may have saved and reused it), one the prologue analyzer found a
// slot for is read from it, and each says where it came from.
TEST(Stepper, UnprovenCalleeSavedRegistersAreUnavailable) {
  FakeMemory mem;
  mem.put_word(0x1010, 0x400500);  // RA at CFA-8 (CFA = rsp + 16 = 0x1018)
  mem.put_word(0x1008, 0xbbb);     // rbx at CFA-16 (push %rbx)
  RegisterSet regs = x86_regs(0x400100, 0x1008, 0x5555);
  regs.set(x::rbx, 0x1);  // the callee's rbx: reused after the push
  regs.set(x::r12, 0x2);
  auto rule = x86_rule({CfaRule::Kind::RegOffset, x::rsp, 16}, RegRule::at_cfa(-8),
                       RegRule::unchanged());
  rule.source = Source::SFrame;
  ASSERT_EQ(rule.unlisted, Unlisted::Unavailable);  // the honest default
  auto bare = step(rule, regs, mem);
  ASSERT_TRUE(bare) << bare.error().to_string();
  EXPECT_FALSE(bare->caller.known(x::rbx));
  EXPECT_FALSE(bare->caller.known(x::r12));
  EXPECT_EQ(bare->caller.fp(), 0x5555u);  // FP: SFrame's own rule (unchanged)
  EXPECT_EQ(bare->caller.origin(x::rbp), RegOrigin::Carried);

  rule.saved = {{x::rbx, RegRule::at_cfa(-16)}};
  rule.unlisted = Unlisted::Unchanged;  // the analyzer explained every CFA change
  auto proven = step(rule, regs, mem);
  ASSERT_TRUE(proven) << proven.error().to_string();
  EXPECT_EQ(proven->caller.get(x::rbx), 0xbbbu);
  EXPECT_EQ(proven->caller.origin(x::rbx), RegOrigin::Code);
  EXPECT_EQ(proven->caller.get(x::r12), 0x2u);
  EXPECT_EQ(proven->caller.origin(x::r12), RegOrigin::Carried);
  EXPECT_EQ(proven->caller.origin(x::rsp), RegOrigin::Table);
  EXPECT_EQ(proven->caller.stepped_by(), Source::SFrame);
}

// A CFA based on a register a rule recovered is trusted above frame 0; one a debugger handed
// over for an outer frame (origin Thread) is not.
TEST(Stepper, CfaFromARecoveredRegisterIsTrustedInOuterFrames) {
  FakeMemory mem;
  mem.put_word(0x2000, 0x400900);  // RA at CFA-8, CFA = r13 + 16 = 0x2008
  RegisterSet regs = x86_regs(0x400100, 0x1000, 0x5555);
  regs.set(x::r13, 0x1ff8, RegOrigin::Code);
  auto rule = x86_rule({CfaRule::Kind::RegOffset, x::r13, 16}, RegRule::at_cfa(-8),
                       RegRule::unchanged());
  auto r = step(rule, regs, mem);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->cfa, 0x2008u);
  EXPECT_EQ(r->caller.pc(), 0x400900u);

  regs.set(x::r13, 0x1ff8, RegOrigin::Thread);
  EXPECT_FALSE(step(rule, regs, mem));
}

}  // namespace
}  // namespace unwindkit
