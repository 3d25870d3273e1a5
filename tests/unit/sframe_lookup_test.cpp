// lookup(): sections built by hand (sframe_builder.h); every expected value is worked out
// from the format's arithmetic (notes §1) and written out literally.
#include <gtest/gtest.h>

#include "sframe_builder.h"
#include "unwindkit/sframe/section.h"
#include "unwindkit/sframe/sframe.h"

namespace {

using namespace unwindkit;
using test::FdeSpec;
using test::fre_info;
using test::SectionSpec;

sframe::Section decode_ok(const SectionSpec& spec, uint64_t address = 0) {
  const auto bytes = test::build_sframe(spec);
  auto s = sframe::decode(bytes, address);
  EXPECT_TRUE(s) << s.error().to_string();
  return s ? *s : sframe::Section{};
}

UnwindRule rule_at(const sframe::Section& s, uint64_t pc) {
  auto r = sframe::lookup(s, pc);
  EXPECT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r && r->has_value()) << "no rule at pc " << std::hex << pc;
  return r && r->has_value() ? **r : UnwindRule{};
}

bool no_rule_at(const sframe::Section& s, uint64_t pc) {
  auto r = sframe::lookup(s, pc);
  return r && !r->has_value();
}

constexpr uint16_t kRsp = 7, kRbp = 6;

// AMD64 v2, PCREL clear, section at 0: the stored start is the address itself.
// f0 [0x1000, 0x1020): push %rbp; mov %rsp,%rbp at 0/1/4. f1 [0x1040, 0x1050).
SectionSpec amd64_two_functions() {
  SectionSpec spec;
  spec.fdes = {
      FdeSpec{0x1000, 0x20, 0, 0, 0,
              {{0, fre_info(true, 1), {8}},
               {1, fre_info(true, 2), {16, -16}},
               {4, fre_info(false, 2), {16, -16}}}},
      FdeSpec{0x1040, 0x10, 0, 0, 0, {{0, fre_info(true, 1), {8}}}},
  };
  return spec;
}

TEST(SFrameLookup, Amd64RowsAtEveryBoundary) {
  const auto s = decode_ok(amd64_two_functions());
  UnwindRule r = rule_at(s, 0x1000);
  EXPECT_EQ(r.arch, Arch::X86_64);
  EXPECT_EQ(r.source, Source::SFrame);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, kRsp, 8}));
  EXPECT_EQ(r.ra, RegRule::at_cfa(-8));
  EXPECT_EQ(r.fp, RegRule::unchanged());
  EXPECT_EQ(r.func_start, 0x1000u);
  EXPECT_EQ(r.func_end, 0x1020u);
  EXPECT_FALSE(r.outermost());
  for (uint64_t pc : {0x1001u, 0x1003u}) {
    r = rule_at(s, pc);
    EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, kRsp, 16}));
    EXPECT_EQ(r.fp, RegRule::at_cfa(-16));
  }
  for (uint64_t pc : {0x1004u, 0x101fu}) {
    r = rule_at(s, pc);
    EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, kRbp, 16}));  // FP-based CFA
    EXPECT_EQ(r.fp, RegRule::at_cfa(-16));
    EXPECT_EQ(r.ra, RegRule::at_cfa(-8));
  }
  for (uint64_t pc : {0x1040u, 0x104fu}) {
    r = rule_at(s, pc);
    EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, kRsp, 8}));
    EXPECT_EQ(r.func_start, 0x1040u);
    EXPECT_EQ(r.func_end, 0x1050u);
  }
}

TEST(SFrameLookup, GapsAndOutsideHaveNoRule) {
  const auto s = decode_ok(amd64_two_functions());
  for (uint64_t pc : {0x0u, 0xfffu, 0x1020u, 0x103fu, 0x1050u, 0xffffffffu})
    EXPECT_TRUE(no_rule_at(s, pc)) << std::hex << pc;
}

TEST(SFrameLookup, UnsortedSectionIsSearchedLinearly) {
  SectionSpec spec = amd64_two_functions();
  std::swap(spec.fdes[0], spec.fdes[1]);
  spec.flags = 0;
  const auto s = decode_ok(spec);
  EXPECT_EQ(rule_at(s, 0x1004).cfa, (CfaRule{CfaRule::Kind::RegOffset, kRbp, 16}));
  EXPECT_EQ(rule_at(s, 0x1040).func_start, 0x1040u);
  EXPECT_TRUE(no_rule_at(s, 0x1030));
}

TEST(SFrameLookup, FreBeforeFirstRowIsAGap) {
  SectionSpec spec;
  spec.fdes = {FdeSpec{0x1000, 0x10, 0, 0, 0, {{4, fre_info(true, 1), {8}}}}};
  const auto s = decode_ok(spec);
  EXPECT_TRUE(no_rule_at(s, 0x1003));
  EXPECT_EQ(rule_at(s, 0x1004).cfa.offset, 8);
}

// PCMASK (.plt): rows repeat every rep_size bytes counted from the function start. The
// function starts at 0x2008, so pc % 16 would pick the wrong row.
TEST(SFrameLookup, PcMaskUsesOffsetFromFunctionStart) {
  SectionSpec spec;
  spec.fdes = {FdeSpec{0x2008, 0x40, 0x10 /*PCMASK*/, 0, 16,
                       {{0, fre_info(true, 1), {8}}, {11, fre_info(true, 1), {16}}}}};
  const auto s = decode_ok(spec);
  for (uint64_t block = 0; block < 4; ++block) {
    const uint64_t base = 0x2008 + block * 16;
    EXPECT_EQ(rule_at(s, base + 0).cfa.offset, 8);
    EXPECT_EQ(rule_at(s, base + 10).cfa.offset, 8);
    EXPECT_EQ(rule_at(s, base + 11).cfa.offset, 16);
    EXPECT_EQ(rule_at(s, base + 15).cfa.offset, 16);
  }
  EXPECT_TRUE(no_rule_at(s, 0x2048));
}

// v1 has no rep_size: PCMASK blocks are 16 bytes.
TEST(SFrameLookup, PcMaskV1Uses16ByteBlocks) {
  SectionSpec spec;
  spec.version = 1;
  spec.fdes = {FdeSpec{0x3004, 0x20, 0x10, 0, 0,
                       {{0, fre_info(true, 1), {8}}, {6, fre_info(true, 1), {16}}}}};
  const auto s = decode_ok(spec);
  EXPECT_EQ(rule_at(s, 0x3004 + 5).cfa.offset, 8);
  EXPECT_EQ(rule_at(s, 0x3004 + 6).cfa.offset, 16);
  EXPECT_EQ(rule_at(s, 0x3004 + 16 + 5).cfa.offset, 8);
  EXPECT_EQ(rule_at(s, 0x3004 + 16 + 15).cfa.offset, 16);
}

TEST(SFrameLookup, PcIncOffsetsOfTwoAndFourBytes) {
  SectionSpec spec;
  spec.fdes = {FdeSpec{0x10000, 0x20000, 2 /*4-byte starts*/, 0, 0,
                       {{0, fre_info(true, 1), {8}}, {0x12345, fre_info(true, 1, 1), {0x1234}}}},
               FdeSpec{0x40000, 0x400, 1 /*2-byte starts*/, 0, 0,
                       {{0, fre_info(true, 1), {8}}, {0x300, fre_info(true, 1, 2), {0x123456}}}}};
  const auto s = decode_ok(spec);
  EXPECT_EQ(rule_at(s, 0x10000 + 0x12344).cfa.offset, 8);
  EXPECT_EQ(rule_at(s, 0x10000 + 0x12345).cfa.offset, 0x1234);
  EXPECT_EQ(rule_at(s, 0x402ff).cfa.offset, 8);
  EXPECT_EQ(rule_at(s, 0x40300).cfa.offset, 0x123456);
}

// Function start resolution: v2 with PCREL set counts from the FDE's own start field.
// Section at 0x5000; FDE i's field is at 0x5000 + 28 + 20*i. Stored values by hand:
// f0 at 0x1000: 0x1000 - 0x501c = -0x401c; f1 at 0x1100: 0x1100 - 0x5030 = -0x3f30.
TEST(SFrameLookup, PcrelStartCountsFromTheFdeField) {
  SectionSpec spec;
  spec.flags = 0x5;
  spec.fdes = {FdeSpec{-0x401c, 0x10, 0, 0, 0, {{0, fre_info(true, 1), {8}}}},
               FdeSpec{-0x3f30, 0x10, 0, 0, 0, {{0, fre_info(true, 1), {16}}}}};
  const auto s = decode_ok(spec, 0x5000);
  EXPECT_EQ(rule_at(s, 0x1000).cfa.offset, 8);
  EXPECT_EQ(rule_at(s, 0x110f).cfa.offset, 16);
  EXPECT_EQ(s.fdes[1].func_start, 0x1100u);
}

// PCREL clear: start = section address + value (the section start, not the FDE table's).
TEST(SFrameLookup, NonPcrelStartCountsFromTheSectionStart) {
  SectionSpec spec;
  spec.version = 1;
  spec.fdes = {FdeSpec{-0x4000, 0x10, 0, 0, 0, {{0, fre_info(true, 1), {8}}}}};
  const auto s = decode_ok(spec, 0x5000);
  EXPECT_EQ(rule_at(s, 0x1000).func_start, 0x1000u);
}

// v3 stores 64-bit starts: a function 8 GiB below the section. Field at 0x2_0000_0000 + 28.
TEST(SFrameLookup, V3SixtyFourBitStart) {
  SectionSpec spec;
  spec.version = 3;
  spec.flags = 0x5;
  spec.fdes = {FdeSpec{-0x20000001c, 0x10, 0, 0, 0, {{0, fre_info(true, 1), {8}}}}};
  const auto s = decode_ok(spec, 0x200000000);
  EXPECT_EQ(rule_at(s, 0x0).func_start, 0x0u);
  EXPECT_EQ(rule_at(s, 0xf).cfa.offset, 8);
}

TEST(SFrameLookup, NoDataWordsIsTheOutermostFrame) {
  SectionSpec spec;
  spec.version = 3;
  spec.fdes = {FdeSpec{0x1000, 0x10, 0, 0, 0,
                       {{0, fre_info(true, 1), {8}}, {5, fre_info(false, 0), {}}}}};
  const auto s = decode_ok(spec);
  const UnwindRule r = rule_at(s, 0x1005);
  EXPECT_TRUE(r.outermost());
  EXPECT_EQ(r.ra, RegRule::undefined());
  EXPECT_FALSE(rule_at(s, 0x1004).outermost());
}

TEST(SFrameLookup, V3SignalBit) {
  SectionSpec spec;
  spec.version = 3;
  spec.fdes = {FdeSpec{0x1000, 0x10, 0x80, 0, 0, {{0, fre_info(true, 1), {160}}}},
               FdeSpec{0x1010, 0x10, 0, 0, 0, {{0, fre_info(true, 1), {8}}}}};
  const auto s = decode_ok(spec);
  EXPECT_TRUE(rule_at(s, 0x1000).signal_frame);
  EXPECT_FALSE(rule_at(s, 0x1010).signal_frame);
}

// Flexible FDEs: (control, offset) pairs; control = reg << 3 | deref << 1 | reg_p.
// rsp = 7 → 57 (0x39), rbp = 6 → 49 (0x31), deref rbp → 51, rbx = 3 → 25, deref rbx → 27.
TEST(SFrameLookup, V3FlexibleForms) {
  SectionSpec spec;
  spec.version = 3;
  spec.fdes = {FdeSpec{0x1000, 0x20, 0, 1 /*flex*/, 0,
                       {{0, fre_info(false, 2), {57, 8}},
                        {1, fre_info(false, 5), {57, 16, 0, 2, -16}},
                        {4, fre_info(false, 5), {51, -8, 0, 51, 0}},
                        {8, fre_info(false, 4), {49, 16, 25, 0}},
                        {12, fre_info(false, 6), {49, 16, 27, 8, 2, -16}},
                        {16, fre_info(false, 4), {57, 8, 2, -16}}}}};
  const auto s = decode_ok(spec);
  UnwindRule r = rule_at(s, 0x1000);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, kRsp, 8}));
  EXPECT_EQ(r.ra, RegRule::at_cfa(-8));  // not described: the fixed RA offset
  EXPECT_EQ(r.fp, RegRule::unchanged());
  r = rule_at(s, 0x1001);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, kRsp, 16}));
  EXPECT_EQ(r.ra, RegRule::at_cfa(-8));  // padding
  EXPECT_EQ(r.fp, RegRule::at_cfa(-16));
  r = rule_at(s, 0x1004);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::DerefRegOffset, kRbp, -8}));
  EXPECT_EQ(r.ra, RegRule::at_cfa(-8));
  EXPECT_EQ(r.fp, RegRule::at_reg(kRbp, 0));
  r = rule_at(s, 0x1008);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, kRbp, 16}));
  EXPECT_EQ(r.ra, RegRule::in_reg(3, 0));
  EXPECT_EQ(r.fp, RegRule::unchanged());
  r = rule_at(s, 0x100c);
  EXPECT_EQ(r.ra, RegRule::at_reg(3, 8));
  EXPECT_EQ(r.fp, RegRule::at_cfa(-16));
  r = rule_at(s, 0x1010);
  EXPECT_EQ(r.ra, RegRule::at_cfa(-16));  // reg_p = 0: saved at CFA - 16
}

TEST(SFrameLookup, FlexibleCfaBasedOnCfaIsAnError) {
  SectionSpec spec;
  spec.version = 3;
  spec.fdes = {FdeSpec{0x1000, 0x10, 0, 1, 0, {{0, fre_info(false, 2), {2, 8}}}}};
  const auto s = decode_ok(spec);
  auto r = sframe::lookup(s, 0x1000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "fde[0].fre[0].word[0]");
}

// AArch64: CFA, then RA, then FP, all CFA-relative; no RA word = leaf, RA still in x30.
SectionSpec aarch64_spec(Endian endian, uint8_t abi) {
  SectionSpec spec;
  spec.endian = endian;
  spec.abi = abi;
  spec.fixed_ra = 0;
  spec.fdes = {FdeSpec{0x400000, 0x20, 0x20 /*key B*/, 0, 0,
                       {{0, fre_info(true, 1), {0}},
                        {4, fre_info(true, 1, 0, true), {0}},
                        {8, fre_info(true, 3, 0, true), {16, -8, -16}},
                        {12, fre_info(false, 3, 1), {16, -8, -16}}}}};
  return spec;
}

void expect_aarch64_rules(const sframe::Section& s) {
  UnwindRule r = rule_at(s, 0x400000);
  EXPECT_EQ(r.arch, Arch::AArch64);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, 31, 0}));
  EXPECT_EQ(r.ra, RegRule::in_reg(30));
  EXPECT_EQ(r.fp, RegRule::unchanged());
  EXPECT_FALSE(r.ra_mangled);
  r = rule_at(s, 0x400004);
  EXPECT_TRUE(r.ra_mangled);
  EXPECT_EQ(r.pauth_key, PauthKey::B);
  EXPECT_EQ(r.ra, RegRule::in_reg(30));
  r = rule_at(s, 0x400008);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, 31, 16}));
  EXPECT_EQ(r.ra, RegRule::at_cfa(-8));
  EXPECT_EQ(r.fp, RegRule::at_cfa(-16));
  r = rule_at(s, 0x40001f);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, 29, 16}));
  EXPECT_FALSE(r.ra_mangled);
}

TEST(SFrameLookup, AArch64LittleEndian) {
  expect_aarch64_rules(decode_ok(aarch64_spec(Endian::Little, 2)));
}

TEST(SFrameLookup, AArch64BigEndian) {
  const auto s = decode_ok(aarch64_spec(Endian::Big, 1));
  EXPECT_EQ(s.endian, Endian::Big);
  expect_aarch64_rules(s);
}

// The magic reads 0xe2de when the section is in the other byte order: the bytes start
// de e2 for big-endian.
TEST(SFrameLookup, ForeignEndianMagic) {
  const auto bytes = test::build_sframe(aarch64_spec(Endian::Big, 1));
  EXPECT_EQ(bytes[0], 0xde);
  EXPECT_EQ(bytes[1], 0xe2);
}

// s390x (big-endian): CFA stored (off - 160) / 8; RA word 0 = padding (RA in r14); a v2
// word with the low bit set is register word >> 1; caller's SP = CFA - 160.
TEST(SFrameLookup, S390x) {
  SectionSpec spec;
  spec.endian = Endian::Big;
  spec.abi = 4;
  spec.fixed_ra = 0;
  spec.fdes = {FdeSpec{0x1000, 0x40, 0, 0, 0,
                       {{0, fre_info(true, 1), {0}},
                        {6, fre_info(true, 3), {2, -48, -72}},
                        {10, fre_info(true, 3), {2, 0, -72}},
                        {14, fre_info(false, 3), {20, 2 * 8 + 1, 2 * 9 + 1}}}}};
  const auto s = decode_ok(spec);
  UnwindRule r = rule_at(s, 0x1000);
  EXPECT_EQ(r.arch, Arch::S390x);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, 15, 160}));  // 0 * 8 + 160
  EXPECT_EQ(r.sp_from_cfa, -160);
  EXPECT_EQ(r.ra, RegRule::in_reg(14));
  r = rule_at(s, 0x1006);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, 15, 176}));  // 2 * 8 + 160
  EXPECT_EQ(r.ra, RegRule::at_cfa(-48));
  EXPECT_EQ(r.fp, RegRule::at_cfa(-72));
  r = rule_at(s, 0x100a);
  EXPECT_EQ(r.ra, RegRule::in_reg(14));  // padding
  EXPECT_EQ(r.fp, RegRule::at_cfa(-72));
  r = rule_at(s, 0x100e);
  EXPECT_EQ(r.cfa, (CfaRule{CfaRule::Kind::RegOffset, 11, 320}));  // 20 * 8 + 160, FP-based
  EXPECT_EQ(r.ra, RegRule::in_reg(8));
  EXPECT_EQ(r.fp, RegRule::in_reg(9));
}

TEST(SFrameDecode, RejectsBadMagicVersionAndAbi) {
  SectionSpec spec = amd64_two_functions();
  auto bytes = test::build_sframe(spec);
  auto bad = bytes;
  bad[0] = 0x12;
  auto r = sframe::decode(bad, 0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().section, ".sframe");
  EXPECT_EQ(r.error().offset, 0u);
  EXPECT_EQ(r.error().field, "sfp_magic");
  bad = bytes;
  bad[2] = 9;
  r = sframe::decode(bad, 0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().offset, 2u);
  EXPECT_EQ(r.error().field, "sfp_version");
  EXPECT_EQ(r.error().kind, ErrorKind::Unsupported);
  bad = bytes;
  bad[4] = 7;
  r = sframe::decode(bad, 0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().offset, 4u);
  EXPECT_EQ(r.error().field, "sfh_abi_arch");
}

TEST(SFrameDecode, EveryTruncationIsAnErrorNotACrash) {
  const auto bytes = test::build_sframe(amd64_two_functions());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = sframe::decode(Bytes(bytes.data(), n), 0);
    EXPECT_FALSE(r) << n;
    if (!r) {
      EXPECT_EQ(r.error().section, ".sframe");
    }
  }
  EXPECT_TRUE(sframe::decode(bytes, 0));
}

}  // namespace
