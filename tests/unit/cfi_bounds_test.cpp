// What CFI may ask of libdw, which runs an FDE's program afresh for each lookup, keeping a
// rule for every register up to the highest named and copying them all at each
// DW_CFA_remember_state (core/src/dwarf/cfi_entries.h), and what a lookup says of a rule it
// cannot lower. Hand-built `.eh_frame`s whose instruction offsets follow from the DWARF 5 §6.4
// layout they are written in.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/sframe/from_cfi.h"
#include "elf_image.h"

namespace unwindkit::dwarf {
namespace {

constexpr uint8_t kPcrelSdata4 = 0x1b, kDatarelSdata4 = 0x3b, kUdata4 = 0x03;
constexpr uint8_t kOffsetExtended = 0x05, kUndefined = 0x07, kRemember = 0x0a,
                  kRestore = 0x0b, kDefCfaOffset = 0x0e, kAdvance1 = 0x41;
constexpr uint8_t kEight = 8, kSixteen = 16;

void put(std::vector<uint8_t>& b, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void uleb(std::vector<uint8_t>& b, uint64_t v) {
  do {
    const uint8_t low = v & 0x7f;
    v >>= 7;
    b.push_back(static_cast<uint8_t>(low | (v != 0 ? 0x80 : 0)));
  } while (v != 0);
}

// An `.eh_frame` to be loaded at `address`: entries are appended and their offsets kept.
struct EhFrame {
  uint64_t address = 0;
  std::vector<uint8_t> b;

  // CIE "zR" (FDE pointers pcrel sdata4), code align 1, data align -8, RA column 16: CFA =
  // rsp+8, rip at CFA-8, then `extra` (whose offset goes to `extra_at`). Returns the CIE's.
  size_t cie(const std::vector<uint8_t>& extra = {}, size_t* extra_at = nullptr) {
    const size_t at = b.size();
    put(b, 0, 4);  // length, patched below
    put(b, 0, 4);  // CIE id
    const std::vector<uint8_t> head{1, 'z', 'R', 0, 1, 0x78, 16, 1, kPcrelSdata4,
                                    0x0c, 7, 8, 0x90, 1};  // def_cfa rsp 8; rip at cfa-8
    b.insert(b.end(), head.begin(), head.end());
    if (extra_at) *extra_at = b.size();
    b.insert(b.end(), extra.begin(), extra.end());
    close(at);
    return at;
  }
  // An FDE of the CIE at `cie` for [start, start + size) running `program`; returns the offset
  // of the program's first byte (the entry's own offset is that minus 17). `augmentation` is
  // the length of its augmentation data, which holds no byte (more than 0 runs past the
  // program, or past the entry).
  size_t fde(size_t cie, uint64_t start, uint32_t size, const std::vector<uint8_t>& program,
             uint8_t augmentation = 0) {
    const size_t at = b.size();
    put(b, 0, 4);
    put(b, b.size() - cie, 4);  // CIE pointer: back from this field
    put(b, start - (address + b.size()), 4);
    put(b, size, 4);
    b.push_back(augmentation);  // augmentation data length (a one-byte ULEB128)
    const size_t first = b.size();
    b.insert(b.end(), program.begin(), program.end());
    close(at);
    return first;
  }
  void terminator() { put(b, 0, 4); }

 private:
  void close(size_t at) {
    while ((b.size() - at) % 4 != 0) b.push_back(0);  // DW_CFA_nop
    const uint32_t length = static_cast<uint32_t>(b.size() - at - 4);
    std::memcpy(b.data() + at, &length, 4);
  }
};

// .eh_frame_hdr at `address` for the .eh_frame at `eh_frame_ptr`, its search table naming
// each (start, FDE offset in `frame`).
std::vector<uint8_t> header(uint64_t address, uint64_t eh_frame_ptr, const EhFrame& frame,
                            const std::vector<std::pair<uint64_t, size_t>>& table) {
  std::vector<uint8_t> h{1, kPcrelSdata4, kUdata4, kDatarelSdata4};
  put(h, eh_frame_ptr - (address + h.size()), 4);
  put(h, table.size(), 4);
  for (const auto& [start, fde] : table) {
    put(h, start - address, 4);
    put(h, frame.address + fde - address, 4);
  }
  return h;
}

// An x86_64 executable (elf_image.h) holding .eh_frame (at EhFrame::address, which
// frame_address() gives before it is built) and, if given, .eh_frame_hdr right after it in
// the file. ld lists the header's section first; libdw 0.188 pairs .eh_frame only with a
// header listed before it, and otherwise walks the entries.
constexpr uint64_t frame_address() { return test::kImageBase + test::kImageHeaders; }

std::shared_ptr<const std::vector<uint8_t>> elf_image(const EhFrame& frame,
                                                      const std::vector<uint8_t>& hdr,
                                                      bool header_listed_first = true) {
  const test::ImageSection sections[] = {{".eh_frame", frame.b}, {".eh_frame_hdr", hdr}};
  constexpr size_t kAsLd[] = {1, 0};
  const std::span<const test::ImageSection> present(sections, hdr.empty() ? 1 : 2);
  return std::make_shared<const std::vector<uint8_t>>(test::elf_image(
      EM_X86_64, present, header_listed_first && !hdr.empty() ? kAsLd : std::span<const size_t>{}));
}

std::vector<uint8_t> naming(uint8_t op, uint64_t reg) {
  std::vector<uint8_t> p{kAdvance1, op};
  uleb(p, reg);
  if (op == kOffsetExtended) p.push_back(2);
  return p;
}

constexpr uint64_t kFunction = 0x1000, kSize = 0x40;

Result<std::optional<UnwindRule>> lookup(const EhFrame& frame, uint64_t pc) {
  auto cfi = CfiTables::open_eh_frame(Arch::X86_64, frame.b, frame.address);
  if (!cfi) return tl::unexpected(cfi.error());
  return cfi->lookup(pc);
}

TEST(CfiBounds, AnFdeNamingARegisterPastTheBoundRefusesTheTable) {
  for (uint8_t op : {kOffsetExtended, kUndefined}) {
    EhFrame fine{0x2000, {}};
    const size_t cie = fine.cie();
    fine.fde(cie, kFunction, kSize, naming(op, 1023));
    fine.terminator();
    auto ok = lookup(fine, kFunction + 1);
    ASSERT_TRUE(ok) << ok.error().to_string();
    EXPECT_TRUE(*ok);

    EhFrame bad{0x2000, {}};
    const size_t bad_cie = bad.cie();
    bad.fde(bad_cie, 0x5000, kSize, {});  // another function, harmless itself
    const size_t program = bad.fde(bad_cie, kFunction, kSize, naming(op, 1024));
    bad.terminator();
    for (uint64_t pc : {kFunction, uint64_t{0x5000}}) {  // every lookup: libdw may run any
      auto refused = lookup(bad, pc);
      ASSERT_FALSE(refused);
      EXPECT_EQ(refused.error().section, ".eh_frame");
      EXPECT_EQ(refused.error().offset, program + 1);  // after the advance
      EXPECT_EQ(refused.error().field,
                op == kOffsetExtended ? "DW_CFA_offset_extended" : "DW_CFA_undefined");
      EXPECT_NE(refused.error().message.find("1024"), std::string::npos);
    }
  }
}

TEST(CfiBounds, ACieNamingARegisterPastTheBoundRefusesItsFdes) {
  EhFrame frame{0x2000, {}};
  std::vector<uint8_t> extra{kUndefined};
  uleb(extra, 5000);
  size_t program = 0;
  const size_t cie = frame.cie(extra, &program);
  frame.fde(cie, kFunction, kSize, {});
  frame.terminator();
  auto refused = lookup(frame, kFunction);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().offset, program);
  EXPECT_EQ(refused.error().field, "DW_CFA_undefined");
}

TEST(CfiBounds, StatesNestedPastTheBoundRefuseTheTable) {
  for (size_t depth : {size_t{64}, size_t{65}}) {
    EhFrame frame{0x2000, {}};
    const size_t cie = frame.cie();
    std::vector<uint8_t> program{kAdvance1};
    program.insert(program.end(), depth, kRemember);
    program.insert(program.end(), depth, kRestore);
    const size_t first = frame.fde(cie, kFunction, kSize, program);
    frame.terminator();
    auto r = lookup(frame, kFunction + 2);
    if (depth == 64) {
      ASSERT_TRUE(r) << r.error().to_string();
      EXPECT_TRUE(*r);
    } else {
      ASSERT_FALSE(r);
      EXPECT_EQ(r.error().field, "DW_CFA_remember_state");
      EXPECT_EQ(r.error().offset, first + 1 + 64);  // the 65th
    }
  }
}

// libdw finds FDEs through .eh_frame_hdr's table when the table is for this .eh_frame, and then
// runs only the FDE the table gives: an FDE past the terminator, which no walk of the entries
// reaches, is read when a lookup leads there, and a bad one refuses that lookup alone.
TEST(CfiBounds, AnFdeOnlyTheSearchTableNamesIsRead) {
  constexpr uint64_t kHidden = 0x5000;
  for (uint64_t reg : {uint64_t{5}, uint64_t{4096}}) {
    for (bool table_for_this_frame : {true, false}) {
      EhFrame frame{frame_address(), {}};
      const size_t cie = frame.cie();
      const size_t shown = frame.b.size();
      frame.fde(cie, kFunction, kSize, {});
      frame.terminator();
      const size_t hidden = frame.b.size();
      const size_t program = frame.fde(cie, kHidden, kSize, naming(kUndefined, reg));
      const uint64_t hdr_at = frame.address + frame.b.size();
      // Or the header says it is for another .eh_frame (its table still naming these FDEs).
      const uint64_t eh_frame_ptr = frame.address + (table_for_this_frame ? 0 : 0x100);
      const auto hdr = header(hdr_at, eh_frame_ptr, frame, {{kFunction, shown}, {kHidden, hidden}});
      auto file = elf::ElfFile::parse(elf_image(frame, hdr), "hidden");
      ASSERT_TRUE(file) << file.error().to_string();
      auto cfi = CfiTables::open(*file);
      ASSERT_TRUE(cfi) << cfi.error().to_string();
      auto shown_rule = cfi->lookup(kFunction);
      auto hidden_rule = cfi->lookup(kHidden + 1);
      ASSERT_TRUE(shown_rule) << shown_rule.error().to_string();
      EXPECT_TRUE(*shown_rule);
      if (!table_for_this_frame) {  // libdw walks the entries and stops at the terminator
        ASSERT_TRUE(hidden_rule) << hidden_rule.error().to_string();
        EXPECT_FALSE(*hidden_rule);
      } else if (reg == 5) {  // the table leads libdw to it
        ASSERT_TRUE(hidden_rule) << hidden_rule.error().to_string();
        EXPECT_TRUE(*hidden_rule);
      } else {
        ASSERT_FALSE(hidden_rule);
        EXPECT_EQ(hidden_rule.error().offset, program + 1);
        EXPECT_EQ(hidden_rule.error().field, "DW_CFA_undefined");
        EXPECT_TRUE(cfi->describes(kHidden + 1));
        auto again = cfi->lookup(kHidden + 2);  // what was refused stays refused
        ASSERT_FALSE(again);
        EXPECT_EQ(again.error().offset, program + 1);
      }
    }
  }
}

// A register rule the stepper has no form for is refused, naming the register: rbx saved by a
// DW_CFA_expression whose value is a constant (DW_OP_lit0), which no stack slot holds.
TEST(CfiBounds, ARuleNotLoweredNamesItsRegister) {
  constexpr uint8_t kExpression = 0x10, kRbx = 3, kLit0 = 0x30;
  EhFrame frame{0x10000, {}};
  const size_t cie = frame.cie();
  frame.fde(cie, kFunction, kSize, {kAdvance1, kExpression, kRbx, 1, kLit0});
  auto before = lookup(frame, kFunction);
  ASSERT_TRUE(before) << before.error().to_string();
  EXPECT_TRUE(*before);
  auto refused = lookup(frame, kFunction + 1);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().section, ".eh_frame");
  EXPECT_EQ(refused.error().field, "rbx");
}

// Each table entry's FDE is read at its own first lookup, and what that read found is kept
// for it alone: 65 functions, the 65th's FDE naming a register past the bound. A lookup in
// the first function, read and found fine, tells nothing of the 65th (a word of 64 entries
// further on), whose lookup is refused naming its instruction; the others still come back.
TEST(CfiBounds, EachTableEntryIsReadForItself) {
  constexpr size_t kFunctions = 65;
  EhFrame frame{frame_address(), {}};
  const size_t cie = frame.cie();
  std::vector<std::pair<uint64_t, size_t>> table;
  size_t last_program = 0;
  for (size_t i = 0; i < kFunctions; ++i) {
    const uint64_t start = kFunction + i * kSize;
    table.emplace_back(start, frame.b.size());
    const bool last = i + 1 == kFunctions;
    const auto program = last ? naming(kUndefined, 4096) : naming(kDefCfaOffset, kSixteen);
    last_program = frame.fde(cie, start, kSize, program);
  }
  const auto hdr = header(frame.address + frame.b.size(), frame.address, frame, table);
  auto file = elf::ElfFile::parse(elf_image(frame, hdr), "65 functions");
  ASSERT_TRUE(file) << file.error().to_string();
  auto cfi = CfiTables::open(*file);
  ASSERT_TRUE(cfi) << cfi.error().to_string();
  auto first = cfi->lookup(kFunction + 1);
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_TRUE(*first);
  const uint64_t last = kFunction + (kFunctions - 1) * kSize;
  auto refused = cfi->lookup(last + 1);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().offset, last_program + 1);
  EXPECT_EQ(refused.error().field, "DW_CFA_undefined");
  auto second = cfi->lookup(kFunction + kSize + 1);
  ASSERT_TRUE(second) << second.error().to_string();
  EXPECT_TRUE(*second);
}

// describes() asked in address order, as a module's functions are, answers what libdw's
// search answers at each address on its own (a fresh lookup: no FDE kept from another), with
// the table in order, with two entries swapped, and with one moved far from its place (libdw's
// binary search then misses FDEs it lists). Among the FDEs: one whose program is refused, one
// starting after the start its table entry states, one whose augmentation data runs past it
// (libdw cannot use it: a lookup fails, not "no match"), and gaps between functions. Asked in
// address order, then back and on by strides that reach past the next function.
TEST(CfiBounds, DescribesAsLibdwSearchesInAnyTableOrder) {
  constexpr size_t kFunctions = 40, kRefused = 17, kLate = 23, kUnusable = 28;
  constexpr uint64_t kStride = 2 * kSize, kLateBy = 8;
  constexpr uint8_t kPastTheEntry = 0x7f;
  EhFrame frame{frame_address(), {}};
  const size_t cie = frame.cie();
  std::vector<std::pair<uint64_t, size_t>> in_order;
  for (size_t i = 0; i < kFunctions; ++i) {
    const uint64_t start = kFunction + i * kStride;
    in_order.emplace_back(start, frame.b.size());
    frame.fde(cie, i == kLate ? start + kLateBy : start, kSize,
              i == kRefused ? naming(kUndefined, 4096) : naming(kDefCfaOffset, kSixteen),
              i == kUnusable ? kPastTheEntry : 0);
  }
  std::vector<uint64_t> asked = {kFunction / 2};
  for (size_t i = 0; i < kFunctions; i += (i % 3) + 1)  // strides of 1 or 2 functions
    for (uint64_t a : {kFunction + i * kStride, kFunction + i * kStride + kSize - 1,
                       kFunction + i * kStride + kSize})
      asked.push_back(a);
  for (size_t i : {2, 9, 26, 27, 30, 39})  // back, then 7, 17, 1, 3 and 9 on: the gap first
    for (uint64_t a : {kFunction + i * kStride + kSize, kFunction + i * kStride})
      asked.push_back(a);
  asked.push_back(kFunction + kFunctions * kStride + kSize);

  auto swapped = in_order;
  std::swap(swapped[11], swapped[12]);
  auto moved = in_order;  // the 31st entry moved to the 4th place
  std::rotate(moved.begin() + 3, moved.begin() + 30, moved.begin() + 31);
  const std::vector<std::pair<uint64_t, size_t>>* tables[] = {&in_order, &swapped, &moved};
  for (size_t t = 0; t < std::size(tables); ++t) {
    const auto hdr = header(frame.address + frame.b.size(), frame.address, frame, *tables[t]);
    auto file = elf::ElfFile::parse(elf_image(frame, hdr), "40 functions");
    ASSERT_TRUE(file) << file.error().to_string();
    auto asked_in_turn = CfiTables::open(*file);
    ASSERT_TRUE(asked_in_turn) << asked_in_turn.error().to_string();
    size_t described = 0;
    for (uint64_t a : asked) {
      auto alone = CfiTables::open(*file);
      ASSERT_TRUE(alone) << alone.error().to_string();
      auto libdw = alone->lookup(a);  // an FDE found, or libdw (or its bounds) failing
      const bool want = !libdw || *libdw;
      EXPECT_EQ(asked_in_turn->describes(a), want) << std::hex << a << " in table " << t;
      described += want ? 1 : 0;
    }
    EXPECT_GT(described, 10u) << "table " << t;
    EXPECT_LT(described, asked.size() - 10) << "table " << t;
    // libdw fails past the unusable FDE's end, where it says "no match" past a usable one's.
    const uint64_t past = kFunction + kUnusable * kStride + kSize;
    EXPECT_FALSE(CfiTables::open(*file)->lookup(past)) << "table " << t;
    EXPECT_TRUE(CfiTables::open(*file)->lookup(past - kStride)) << "table " << t;
  }
}

// Two FDEs cover one function: a bad one first along the entries, a good one (CFA rsp+16 from
// its second byte) that the table names. With the header listed first, as ld lists it, libdw
// runs the table's FDE, whose rule comes back. Listed after .eh_frame, or followed by a second
// header (for another .eh_frame), libdw 0.188 pairs no table with .eh_frame, walks the entries
// and would run the bad FDE: so that is read and refuses the lookup.
TEST(CfiBounds, WhereLibdwWalksTheEntriesTheirProgramsAreRead) {
  enum class Headers { AsLd, ListedAfter, SecondHeader };
  for (Headers headers : {Headers::AsLd, Headers::ListedAfter, Headers::SecondHeader}) {
    EhFrame frame{frame_address(), {}};
    const size_t cie = frame.cie();
    const size_t bad = frame.fde(cie, kFunction, kSize, naming(kUndefined, 4096));
    const size_t good = frame.b.size();
    frame.fde(cie, kFunction, kSize, {kAdvance1, kDefCfaOffset, kSixteen});
    frame.terminator();
    const uint64_t hdr_at = frame.address + frame.b.size();
    const auto hdr = header(hdr_at, frame.address, frame, {{kFunction, good}});
    const auto other = header(hdr_at + hdr.size(), frame.address + 0x100, frame, {});
    const test::ImageSection sections[] = {
        {".eh_frame", frame.b}, {".eh_frame_hdr", hdr}, {".eh_frame_hdr", other}};
    constexpr size_t kAsLd[] = {1, 0}, kAfter[] = {0, 1}, kSecond[] = {1, 2, 0};
    const bool two = headers == Headers::SecondHeader;
    std::span<const size_t> listed = kSecond;
    if (headers == Headers::AsLd) listed = kAsLd;
    if (headers == Headers::ListedAfter) listed = kAfter;
    const auto image = test::elf_image(EM_X86_64, {sections, two ? 3u : 2u}, listed);
    auto file = elf::ElfFile::parse(std::make_shared<const std::vector<uint8_t>>(image), "two");
    ASSERT_TRUE(file) << file.error().to_string();
    auto cfi = CfiTables::open(*file);
    ASSERT_TRUE(cfi) << cfi.error().to_string();
    auto rule = cfi->lookup(kFunction + 1);
    if (headers == Headers::AsLd) {
      ASSERT_TRUE(rule) << rule.error().to_string();
      ASSERT_TRUE(*rule);
      EXPECT_EQ((*rule)->cfa.offset, kSixteen);
    } else {
      ASSERT_FALSE(rule);
      EXPECT_EQ(rule.error().offset, bad + 1);
      EXPECT_EQ(rule.error().field, "DW_CFA_undefined");
    }
  }
}

// A conversion looks up every row, each running the program from its start: a function whose
// rows times (program bytes + register rules copied) passes 2^25 is skipped, naming its FDE.
// Here 3 bytes a row and 35 rules (libdw's own RA_SIGN_STATE is register 34): 3000 rows ask
// 3001 * (9000 + 35) = 27.1 M, 3500 rows 3501 * (10500 + 35) = 36.9 M.
TEST(CfiBounds, AConversionSkipsAFunctionAskingTooMuchOfLibdw) {
  for (uint32_t rows : {uint32_t{3000}, uint32_t{3500}}) {
    EhFrame frame{frame_address(), {}};
    const size_t cie = frame.cie();
    const size_t fde = frame.b.size();
    // Each row moves the CFA by 8: no two in a row say the same.
    std::vector<uint8_t> program;
    for (uint32_t i = 0; i < rows; ++i)
      program.insert(program.end(), {kAdvance1, kDefCfaOffset, i % 2 == 0 ? kSixteen : kEight});
    frame.fde(cie, kFunction, rows + 1, program);
    frame.terminator();
    auto file = elf::ElfFile::parse(elf_image(frame, {}), "long");
    ASSERT_TRUE(file) << file.error().to_string();
    auto conv = sframe::from_cfi(*file, sframe::kVersion3);
    ASSERT_TRUE(conv) << conv.error().to_string();
    if (rows == 3000) {
      ASSERT_EQ(conv->skipped.size(), 0u) << conv->skipped[0].reason.to_string();
      ASSERT_EQ(conv->section.fdes.size(), 1u);
      EXPECT_EQ(conv->section.fdes[0].fres.size(), rows + 1);
    } else {
      ASSERT_EQ(conv->skipped.size(), 1u);
      EXPECT_EQ(conv->skipped[0].reason.offset, fde);
      EXPECT_EQ(conv->skipped[0].reason.field, "instructions");
    }
  }
}

}  // namespace
}  // namespace unwindkit::dwarf
