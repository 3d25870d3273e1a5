// DWARF CFI from a bare `.eh_frame`-format section (Mach-O __TEXT,__eh_frame), as compact
// unwind's DWARF mode hands over to it: a hand-built CIE + FDE whose rows are spelled out by
// the DWARF 5 §6.4 instructions they hold, and damaged copies of it.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "unwindkit/dwarf/cfi.h"

namespace unwindkit::dwarf {
namespace {

constexpr uint64_t kSection = 0x2000, kFunction = 0x1000, kLength = 0x20;

void bytes(std::vector<uint8_t>& b, std::initializer_list<unsigned> values) {
  for (unsigned v : values) b.push_back(static_cast<uint8_t>(v));
}

void put(std::vector<uint8_t>& b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// CIE "zR" (FDE pointers pcrel|absptr, 8 bytes), code align 1, data align -8, RA column 16,
// initial CFA = rsp+8, rip at cfa-8. FDE for [0x1000, 0x1020): after 1 byte CFA = rsp+16 and
// rbx at cfa-16 (`push %rbx`); after 3 more, CFA = rbx+16 (`mov %rsp,%rbx`).
std::vector<uint8_t> eh_frame() {
  std::vector<uint8_t> b;
  put(b, 20, 4);  // CIE length
  put(b, 0, 4);   // CIE id
  bytes(b, {1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x10});
  bytes(b, {0x0c, 7, 8, 0x90, 1, 0, 0});  // def_cfa rsp 8; offset rip 1; nops
  put(b, 32, 4);                        // FDE length
  put(b, b.size(), 4);                  // CIE pointer: back to offset 0
  put(b, kFunction - (kSection + b.size()), 8);  // pc_begin, pc-relative
  put(b, kLength, 8);
  b.push_back(0);  // augmentation data length
  bytes(b, {0x41, 0x0e, 16, 0x83, 2, 0x43, 0x0d, 3, 0, 0, 0});
  put(b, 0, 4);  // terminator
  return b;
}

TEST(EhFrameBytes, RowsOfTheFde) {
  const auto bytes = eh_frame();
  auto cfi = CfiTables::open_eh_frame(Arch::X86_64, bytes, kSection);
  ASSERT_TRUE(cfi) << cfi.error().to_string();
  ASSERT_TRUE(cfi->has_eh_frame());

  auto at = [&](uint64_t pc) {
    auto r = cfi->lookup(pc);
    EXPECT_TRUE(r) << r.error().to_string();
    return r ? *r : std::nullopt;
  };
  auto entry = at(kFunction);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->cfa, (CfaRule{CfaRule::Kind::RegOffset, reg::x86_64::rsp, 8}));
  EXPECT_EQ(entry->ra, RegRule::at_cfa(-8));
  EXPECT_TRUE(entry->saved.empty());

  auto pushed = at(kFunction + 2);
  ASSERT_TRUE(pushed);
  EXPECT_EQ(pushed->cfa, (CfaRule{CfaRule::Kind::RegOffset, reg::x86_64::rsp, 16}));
  ASSERT_EQ(pushed->saved.size(), 1u);
  EXPECT_EQ(pushed->saved[0], (SavedReg{reg::x86_64::rbx, RegRule::at_cfa(-16)}));

  auto framed = at(kFunction + kLength - 1);
  ASSERT_TRUE(framed);
  EXPECT_EQ(framed->cfa, (CfaRule{CfaRule::Kind::RegOffset, reg::x86_64::rbx, 16}));
  EXPECT_EQ(framed->ra, RegRule::at_cfa(-8));

  EXPECT_FALSE(at(kFunction + kLength));  // past the FDE: nothing, not an error
  EXPECT_FALSE(at(kFunction - 1));
}

TEST(EhFrameBytes, DamagedSectionsAreErrorsOrNothingNeverACrash) {
  const auto full = eh_frame();
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto cfi = CfiTables::open_eh_frame(Arch::X86_64, cut, kSection);
    if (!cfi) continue;
    auto r = cfi->lookup(kFunction + 2);
    if (r && *r) {
      EXPECT_GE(n, 24u + 36u) << "a rule from a section without the whole FDE";
    }
  }
  auto bad = full;
  bad[24 + 4] = 0x7f;  // CIE pointer pointing before the section
  auto cfi = CfiTables::open_eh_frame(Arch::X86_64, bad, kSection);
  ASSERT_TRUE(cfi);
  auto r = cfi->lookup(kFunction + 2);
  EXPECT_TRUE(!r || !*r);
}

TEST(EhFrameBytes, OnlySixtyFourBitArchitectures) {
  const auto bytes = eh_frame();
  auto cfi = CfiTables::open_eh_frame(Arch::I386, bytes, kSection);
  ASSERT_FALSE(cfi);
  EXPECT_EQ(cfi.error().section, "__eh_frame");
  EXPECT_EQ(cfi.error().field, "arch");
}

}  // namespace
}  // namespace unwindkit::dwarf
