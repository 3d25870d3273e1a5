// Encoding decoder and lowering. Expected values are hand arithmetic per notes §2 (the
// permutation expectations come from an independent encoder: the Lehmer code of each
// ordered register choice), or encodings seen in llvm-objdump output of clang-22 fixtures
// with the registers their prologues push.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <vector>

#include "unwindkit/compact_unwind/encoding.h"
#include "unwindkit/compact_unwind/lookup.h"

namespace unwindkit::compact_unwind {
namespace {

// Lehmer code of an ordered choice of registers 1..6: digit i = how many still-unused
// registers are smaller than reg[i]; radix of digit i = (6-i-1)!/(6-n)!.
uint32_t encode_permutation(const std::vector<uint8_t>& regs) {
  const size_t n = regs.size();
  std::vector<bool> used(7, false);
  uint32_t code = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t digit = 0;
    for (uint8_t r = 1; r < regs[i]; ++r) digit += used[r] ? 0 : 1;
    used[regs[i]] = true;
    uint32_t radix = 1;
    for (size_t k = i + 1; k < n && k < 5; ++k) radix *= static_cast<uint32_t>(6 - k);
    code += digit * radix;
  }
  return code;
}

void choices(size_t n, std::vector<uint8_t>& cur, std::vector<std::vector<uint8_t>>& out) {
  if (cur.size() == n) {
    out.push_back(cur);
    return;
  }
  for (uint8_t r = 1; r <= 6; ++r) {
    if (std::find(cur.begin(), cur.end(), r) != cur.end()) continue;
    cur.push_back(r);
    choices(n, cur, out);
    cur.pop_back();
  }
}

TEST(CompactUnwindPermutation, EveryOrderedChoiceOfEveryCount) {
  const std::array<size_t, 7> expected_counts = {1, 6, 30, 120, 360, 720, 720};
  for (uint32_t n = 0; n <= 6; ++n) {
    std::vector<std::vector<uint8_t>> all;
    std::vector<uint8_t> cur;
    choices(n, cur, all);
    ASSERT_EQ(all.size(), expected_counts[n]);
    std::set<uint32_t> valid_codes;
    for (const auto& regs : all) {
      const uint32_t code = encode_permutation(regs);
      auto got = decode_permutation(n, code);
      ASSERT_TRUE(got) << "n=" << n << " code=" << code << ": " << got.error().to_string();
      EXPECT_EQ(*got, regs) << "n=" << n << " code=" << code;
      valid_codes.insert(code);
    }
    EXPECT_EQ(valid_codes.size(), all.size()) << "codes collide for n=" << n;
    // Every other 10-bit value has an out-of-range digit.
    for (uint32_t p = 0; p < 1024; ++p) {
      if (valid_codes.count(p)) continue;
      auto got = decode_permutation(n, p);
      EXPECT_FALSE(got) << "n=" << n << " p=" << p;
      if (!got) {
        EXPECT_EQ(got.error().field, "permutation");
      }
    }
  }
}

TEST(CompactUnwindPermutation, CountAboveSixIsAnError) {
  auto got = decode_permutation(7, 0);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().field, "register_count");
}

TEST(CompactUnwindPermutation, FixtureEncodings) {
  // 0x02140804 (clang-22 -O2 -fomit-frame-pointer, pushes rbp then rbx): count 2, p 4:
  // digits 4/5 = 0, 4%5 = 4 -> reg 1 (rbx), then the 4th unused of 2..6 = 6 (rbp).
  EXPECT_EQ(*decode_permutation(2, 4), (std::vector<uint8_t>{1, 6}));
  // 0x020c1800: six registers, p 0 -> 1..6 in order (pushes rbp r15 r14 r13 r12 rbx).
  EXPECT_EQ(*decode_permutation(6, 0), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
}

std::vector<SavedSlot> saved(Arch arch, uint32_t encoding) {
  auto d = decode_encoding(arch, encoding);
  EXPECT_TRUE(d) << d.error().to_string();
  return d ? d->saved : std::vector<SavedSlot>{};
}

TEST(CompactUnwindEncoding, X86_64RbpFrame) {
  // 0x010558d1: offset 5, slots rbx r12 r13 r14 r15 at rbp-40.. -> CFA-56..-24.
  auto d = decode_encoding(Arch::X86_64, 0x010558d1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, Kind::FramePointer);
  EXPECT_EQ(d->saved, (std::vector<SavedSlot>{{3, -56}, {12, -48}, {13, -40}, {14, -32},
                                              {15, -24}}));
}

TEST(CompactUnwindEncoding, X86_64StackImmd) {
  // 0x02140804: size 0x14 words = 160 bytes; rbx at CFA-8-16 = -24, rbp at -16.
  auto d = decode_encoding(Arch::X86_64, 0x02140804);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, Kind::FramelessImmediate);
  EXPECT_EQ(d->stack_size, 160u);
  EXPECT_EQ(d->saved, (std::vector<SavedSlot>{{3, -24}, {6, -16}}));
}

TEST(CompactUnwindEncoding, I386UsesFourByteUnitsAndItsOwnRegisters) {
  // STACK_IMMD size 5 (20 bytes), 2 regs, p 1: digits 0, 1 -> ebx, then 2nd unused = edx.
  const uint32_t e = 0x02000000 | (5u << 16) | (2u << 10) | 1u;
  auto d = decode_encoding(Arch::I386, e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->stack_size, 20u);
  EXPECT_EQ(d->saved, (std::vector<SavedSlot>{{3 /*ebx*/, -12}, {2 /*edx*/, -8}}));
  // EBP_FRAME offset 2, slot 0 = edi (4): edi at ebp-8 = CFA-16.
  EXPECT_EQ(saved(Arch::I386, 0x01020004), (std::vector<SavedSlot>{{7 /*edi*/, -16}}));
}

TEST(CompactUnwindEncoding, Arm64FrameAllPairsDAtBits8To11) {
  auto s = saved(Arch::AArch64, 0x04000f1f);
  ASSERT_EQ(s.size(), 18u);
  // x19 at fp-8 = CFA-24, x20 at CFA-32, ... x28 at CFA-96, then d8 at CFA-104 .. d15 -160.
  for (uint16_t i = 0; i < 10; ++i)
    EXPECT_EQ(s[i], (SavedSlot{static_cast<uint16_t>(19 + i), -24 - 8 * int64_t{i}}));
  for (uint16_t i = 0; i < 8; ++i)
    EXPECT_EQ(s[10 + i], (SavedSlot{static_cast<uint16_t>(72 + i), -104 - 8 * int64_t{i}}));
  // Bits 5-7 are not D pairs.
  EXPECT_TRUE(saved(Arch::AArch64, 0x040000e0).empty());
}

TEST(CompactUnwindEncoding, Arm64FramelessWithPairs) {
  // size 1 (16 bytes), x19/x20 and d8/d9: x19 CFA-8, x20 -16, d8 -24, d9 -32.
  auto d = decode_encoding(Arch::AArch64, 0x02001101);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->stack_size, 16u);
  EXPECT_EQ(d->saved, (std::vector<SavedSlot>{{19, -8}, {20, -16}, {72, -24}, {73, -32}}));
}

TEST(CompactUnwindEncoding, UnknownModesAreErrors) {
  for (uint32_t e : {0x05000000u, 0x0f000000u}) {
    auto d = decode_encoding(Arch::X86_64, e);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().field, "mode");
  }
  EXPECT_FALSE(decode_encoding(Arch::AArch64, 0x01000000));
  EXPECT_FALSE(decode_encoding(Arch::X86_64, 0x01000007));  // slot register 7
}

Entry entry(uint32_t encoding) { return Entry{0x1000, 0x1100, encoding, {}, {}}; }

TEST(CompactUnwindLower, ZeroIsNoInformationNotStop) {
  auto l = lower(Arch::X86_64, entry(0), {});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->kind, Lowered::Kind::NoInfo);
}

TEST(CompactUnwindLower, DwarfGivesTheHint) {
  auto l = lower(Arch::X86_64, entry(0x04000058), {});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->kind, Lowered::Kind::UseDwarf);
  EXPECT_EQ(l->dwarf_offset, 0x58u);
  auto a = lower(Arch::AArch64, entry(0x03000014), {});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, Lowered::Kind::UseDwarf);
  EXPECT_EQ(a->dwarf_offset, 0x14u);
}

TEST(CompactUnwindLower, StackIndReadsTheImmediate) {
  // push %rbx; sub $0x186a8,%rsp: imm32 at function+4; 0x03044400: offset 4, adjust 2
  // (return address + rbx), 1 register p 0 (rbx at CFA-16). CFA = rsp + 0x186a8 + 16.
  const std::vector<uint8_t> code = {0x53, 0x48, 0x81, 0xec, 0xa8, 0x86, 0x01, 0x00, 0xc3};
  auto l = lower(Arch::X86_64, entry(0x03044400), code);
  ASSERT_TRUE(l) << l.error().to_string();
  ASSERT_EQ(l->kind, Lowered::Kind::Rule);
  EXPECT_EQ(l->rule.source, Source::CompactUnwind);
  EXPECT_EQ(l->rule.cfa, (CfaRule{CfaRule::Kind::RegOffset, reg::x86_64::rsp, 0x186a8 + 16}));
  EXPECT_EQ(l->rule.ra, RegRule::at_cfa(-8));
  EXPECT_EQ(l->rule.saved, (std::vector<SavedReg>{{reg::x86_64::rbx, RegRule::at_cfa(-16)}}));
  EXPECT_EQ(l->rule.func_start, 0x1000u);
  EXPECT_EQ(l->rule.func_end, 0x1100u);
  // Code too short for the immediate: an error, not a guess.
  const std::vector<uint8_t> short_code(code.begin(), code.begin() + 6);
  EXPECT_FALSE(lower(Arch::X86_64, entry(0x03044400), short_code));
}

TEST(CompactUnwindLower, FramePointerRules) {
  auto l = lower(Arch::X86_64, entry(0x01010001), {});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->rule.cfa, (CfaRule{CfaRule::Kind::RegOffset, reg::x86_64::rbp, 16}));
  EXPECT_EQ(l->rule.fp, RegRule::at_cfa(-16));
  EXPECT_EQ(l->rule.saved, (std::vector<SavedReg>{{reg::x86_64::rbx, RegRule::at_cfa(-24)}}));
  auto a = lower(Arch::AArch64, entry(0x05000001), {});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->rule.cfa, (CfaRule{CfaRule::Kind::RegOffset, reg::aarch64::x29, 16}));
  EXPECT_EQ(a->rule.ra, RegRule::at_cfa(-8));
  EXPECT_TRUE(a->rule.ra_mangled);
  EXPECT_FALSE(lower(Arch::AArch64, entry(0x04000001), {})->rule.ra_mangled);
}

TEST(CompactUnwindLower, Arm64FramelessReturnAddressInLr) {
  auto l = lower(Arch::AArch64, entry(0x02003001), {});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->rule.cfa, (CfaRule{CfaRule::Kind::RegOffset, reg::aarch64::sp, 48}));
  EXPECT_EQ(l->rule.ra, RegRule::in_reg(reg::aarch64::x30));
  EXPECT_TRUE(l->rule.ra.uses_register());  // innermost frame only
  EXPECT_EQ(l->rule.fp, RegRule::unchanged());
  EXPECT_EQ(l->rule.saved, (std::vector<SavedReg>{{19, RegRule::at_cfa(-8)},
                                                  {20, RegRule::at_cfa(-16)}}));
}

}  // namespace
}  // namespace unwindkit::compact_unwind
