// s390x flexible FDEs (SFrame v3, attr "F"): the CFA offset word is stored as (offset - 160)
// / 8 there too, as in default FDEs. Expected values: binutils 2.47.50's readelf prints
// `sp+160` for a stored 0 and `sp+328` for a stored 21 (issue #52, formats.md §1), and
// libsframe's sframe_fre_get_cfa_offset decodes the flexible CFA word the same way whether or
// not the CFA is dereferenced. Sections built by hand (sframe_builder.h).
#include <gtest/gtest.h>

#include <string>

#include "sframe_builder.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/sframe.h"

namespace {

using namespace unwindkit;
using test::FdeSpec;
using test::fre_info;
using test::SectionSpec;

constexpr uint64_t kFunction = 0x1000;
constexpr int64_t kFirstStartField = 28;  // header, no aux header, fdeoff 0
constexpr uint8_t kR15 = 15;              // s390x SP
// Flexible control words: DWARF register << 3 | deref_p << 1 | reg_p.
constexpr int32_t kSp = kR15 << 3 | 1;
constexpr int32_t kDerefSp = kR15 << 3 | 2 | 1;

// One flexible function at kFunction, PCREL (v3 as gas writes it), 1-byte words: CFA = sp + 0
// stored, sp + 21 stored, *(sp + 2 stored).
std::vector<uint8_t> flexible_section() {
  SectionSpec spec;
  spec.endian = Endian::Big;
  spec.version = 3;
  spec.flags = 0x1 | 0x4;  // SORTED, FDE_FUNC_START_PCREL
  spec.abi = 4;            // s390x big-endian
  spec.fixed_fp = 0;
  spec.fixed_ra = 0;
  FdeSpec f;
  f.start = static_cast<int64_t>(kFunction) - kFirstStartField;
  f.size = 0x40;
  f.info = 0;   // 1-byte FRE starts
  f.info2 = 1;  // flexible
  f.fres = {{0, fre_info(true, 2), {kSp, 0}},
            {6, fre_info(true, 2), {kSp, 21}},
            {12, fre_info(true, 2), {kDerefSp, 2}}};
  spec.fdes = {f};
  return test::build_sframe(spec);
}

// The row of the dump that starts at `pc`.
std::string row_at(const std::string& text, uint64_t pc) {
  char head[32];
  std::snprintf(head, sizeof head, "\n    %016llx", static_cast<unsigned long long>(pc));
  const size_t at = text.find(head);
  if (at == std::string::npos) return "no row at " + std::string(head + 1);
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(SFrameS390xFlexible, DumpShowsTheCfaOffsetAsReadelfDoes) {
  const auto bytes = flexible_section();
  auto section = sframe::decode(bytes, 0);
  ASSERT_TRUE(section) << section.error().to_string();
  const std::string text = sframe::dump(*section);
  ASSERT_NE(text.find("pc = 0x1000, size = 64 bytes, attr = \"F\""), std::string::npos) << text;
  // "    %016lx" then "  %-10s" of the CFA cell.
  EXPECT_EQ(row_at(text, 0x1000).substr(0, 32), "    0000000000001000  sp+160    ") << text;
  EXPECT_EQ(row_at(text, 0x1006).substr(0, 32), "    0000000000001006  sp+328    ") << text;
}

TEST(SFrameS390xFlexible, LookupsUseTheCfaOffsetReadelfShows) {
  const auto bytes = flexible_section();
  auto section = sframe::decode(bytes, 0);
  ASSERT_TRUE(section) << section.error().to_string();
  auto index = sframe::Index::build(bytes, 0);
  ASSERT_TRUE(index) << index.error().to_string();
  const struct {
    uint64_t pc;
    CfaRule cfa;
  } rows[] = {{0x1000, {CfaRule::Kind::RegOffset, kR15, 160}},        // 0 * 8 + 160
              {0x1006, {CfaRule::Kind::RegOffset, kR15, 328}},        // 21 * 8 + 160
              {0x100c, {CfaRule::Kind::DerefRegOffset, kR15, 176}}};  // 2 * 8 + 160
  for (const auto& row : rows) {
    // The decoded section's lookup and the walker's index agree with readelf's row.
    auto decoded = sframe::lookup(*section, row.pc);
    ASSERT_TRUE(decoded && decoded->has_value()) << std::hex << row.pc;
    EXPECT_EQ((*decoded)->cfa, row.cfa) << std::hex << row.pc;
    EXPECT_EQ((*decoded)->sp_from_cfa, -160);
    auto indexed = index->lookup(row.pc);
    ASSERT_TRUE(indexed && indexed->has_value()) << std::hex << row.pc;
    EXPECT_EQ((*indexed)->cfa, row.cfa) << std::hex << row.pc;
  }
}

}  // namespace
