// The CFI writer's output, read back by reference tools (readelf and llvm-dwarfdump-22),
// must state the rules it was given. The expected text is written by hand from the input
// rules below, in each tool's notation.
#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "unwindkit/dwarf/cfi_writer.h"
#include "unwindkit/elf/side_file.h"
#include "test_support.h"

namespace unwindkit {
namespace {

namespace x64 = reg::x86_64;

std::string run(const std::string& cmd) { return test::run_output(cmd); }

UnwindRule rule(CfaRule cfa, RegRule ra, RegRule fp, std::vector<SavedReg> saved = {},
                Unlisted unlisted = Unlisted::Unchanged) {
  UnwindRule r;
  r.cfa = cfa;
  r.ra = ra;
  r.fp = fp;
  r.saved = std::move(saved);
  r.unlisted = unlisted;
  return r;
}

constexpr CfaRule sp(int64_t off) { return {CfaRule::Kind::RegOffset, x64::rsp, off}; }

// A symbol file whose CFI section (`.eh_frame` when `eh`, else `.debug_frame`) holds `cfi`,
// with .text at [text, text + text_size): what the reference tools read. Named by `name`
// and this process.
std::filesystem::path write_symbol_file(const std::string& name, std::vector<uint8_t> cfi,
                                        bool eh, uint64_t text, uint64_t text_size) {
  elf::SideFileSpec spec;
  spec.machine = 62;  // EM_X86_64
  spec.type = 3;      // ET_DYN
  spec.build_id = std::vector<uint8_t>(20, 0xab);  // readelf wants a full-size build-id
  spec.sections = {{".text", 0x6 /* SHF_ALLOC|SHF_EXECINSTR */, text, text_size, 16}};
  spec.debug_frame = std::move(cfi);
  if (eh) spec.cfi_section = ".eh_frame";
  auto bytes = elf::write_side_file(spec);
  const auto path = std::filesystem::temp_directory_path() /
                    ("unwindkit-cfi-writer-" + name + "-" + std::to_string(::getpid()) + ".debug");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Three functions covering every rule kind the writer states.
std::vector<dwarf::CfiFunction> functions() {
  const RegRule ra = RegRule::at_cfa(-8);
  return {
      // A frame-pointer function: push rbp; mov rbp, rsp; ...
      {0x1000, 0x1020,
       {{0x1000, rule(sp(8), ra, RegRule::unchanged())},
        {0x1001, rule(sp(16), ra, RegRule::at_cfa(-16))},
        {0x1004, rule({CfaRule::Kind::RegOffset, x64::rbp, 16}, ra, RegRule::at_cfa(-16))},
        {0x101f, rule(sp(8), ra, RegRule::unchanged())}}},
      // The outermost frame: return address undefined.
      {0x1020, 0x1030, {{0x1020, rule(sp(8), RegRule::undefined(), RegRule::unchanged())}}},
      // A dereferenced CFA, saved registers in every form, and a long advance (0x90 bytes).
      {0x1030, 0x1100,
       {{0x1030, rule(sp(8), ra, RegRule::unchanged())},
        {0x10c0,
         rule({CfaRule::Kind::DerefRegOffset, x64::rsp, 16}, ra, RegRule::at_reg(x64::rbx, 8),
              {{x64::r12, RegRule::val_cfa(-32)},
               {x64::r13, RegRule::in_reg(x64::r14)},
               {x64::r15, RegRule::at_cfa(-44)}})}}},
      // Bare SFrame: callee-saved registers nothing proves are undefined; one the code proved
      // saved (rbx) is stated.
      {0x1100, 0x1110,
       {{0x1100, rule(sp(8), ra, RegRule::unchanged(), {}, Unlisted::Unavailable)},
        {0x1101, rule(sp(16), ra, RegRule::unchanged(), {{x64::rbx, RegRule::at_cfa(-16)}},
                      Unlisted::Unavailable)}}},
  };
}

// The same functions as `.debug_frame` (false) and as a symbol file's `.eh_frame` (true).
class CfiWriterTest : public ::testing::TestWithParam<bool> {
 protected:
  bool eh() const { return GetParam(); }
  void SetUp() override {
    auto fns = functions();
    const dwarf::CfiWriterOptions options{Arch::X86_64, Endian::Little, 8, 0, {}};
    path_ = write_symbol_file(eh() ? "eh" : "debug",
                              eh() ? dwarf::write_eh_frame(fns, options)
                                   : dwarf::write_debug_frame(fns, options),
                              eh(), 0x1000, 0x110);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

INSTANTIATE_TEST_SUITE_P(Sections, CfiWriterTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "EhFrame" : "DebugFrame"; });

// The section's own header fields, as readelf reads them: `.eh_frame`'s CIE has id 0,
// version 1, augmentation "zR" with DW_EH_PE_udata4 (03) addresses.
TEST_P(CfiWriterTest, ReadelfReadsTheHeaders) {
  std::string out = run("readelf --debug-dump=frames " + path_.string() + " 2>&1");
  ASSERT_EQ(out.find("Warning"), std::string::npos) << out;
  if (eh()) {
    EXPECT_NE(out.find("Contents of the .eh_frame section"), std::string::npos) << out;
    EXPECT_NE(out.find(" 00000000 CIE\n  Version:               1\n  Augmentation:          \"zR\"\n"),
              std::string::npos) << out;
    EXPECT_NE(out.find("  Augmentation data:     03\n"), std::string::npos) << out;
  } else {
    EXPECT_NE(out.find("Contents of the .debug_frame section"), std::string::npos) << out;
    EXPECT_NE(out.find(" ffffffff CIE\n  Version:               3\n  Augmentation:          \"\"\n"),
              std::string::npos) << out;
  }
  EXPECT_NE(out.find("FDE cie=00000000 pc=0000000000001100..0000000000001110"), std::string::npos) << out;
}

// readelf's interpretation (--debug-dump=frames-interp): one table per FDE.
TEST_P(CfiWriterTest, ReadelfInterpretsTheRulesGiven) {
  std::string out = run("readelf --debug-dump=frames-interp " + path_.string() + " 2>&1");
  ASSERT_EQ(out.find("Warning"), std::string::npos) << out;
  ASSERT_EQ(out.find("rror"), std::string::npos) << out;
  const char* expected[] = {
      // function 1
      "pc=0000000000001000..0000000000001020\n"
      "   LOC           CFA      rbp   ra    \n"
      "0000000000001000 rsp+8    s     c-8   \n"
      "0000000000001001 rsp+16   c-16  c-8   \n"
      "0000000000001004 rbp+16   c-16  c-8   \n"
      "000000000000101f rsp+8    s     c-8   \n",
      // function 2
      "pc=0000000000001020..0000000000001030\n"
      "   LOC           CFA      rbp   ra    \n"
      "0000000000001020 rsp+8    s     u     \n",
      // function 3
      "pc=0000000000001030..0000000000001100\n"
      "   LOC           CFA      rbp   r12   r13   r15   ra    \n"
      "0000000000001030 rsp+8    s     u     u     u     c-8   \n"
      "00000000000010c0 exp      exp   v-32  r14 (r14) exp   c-8   \n",
      // function 4
      "pc=0000000000001100..0000000000001110\n"
      "   LOC           CFA      rbx   rbp   r12   r13   r14   r15   ra    \n"
      "0000000000001100 rsp+8    u     s     u     u     u     u     c-8   \n"
      "0000000000001101 rsp+16   c-16  s     u     u     u     u     c-8   \n",
  };
  for (const char* table : expected) EXPECT_NE(out.find(table), std::string::npos) << table << "\n---\n" << out;
}

// llvm-dwarfdump's interpretation of functions(), one line per row: it spells out the
// expressions readelf's table shows as "exp" (function 3's second row must be exactly the rule
// given).
constexpr const char* kDwarfdumpRows[] = {
    "0x1000: CFA=RSP+8: RBP=same, RIP=[CFA-8]\n",
    "0x1001: CFA=RSP+16: RBP=[CFA-16], RIP=[CFA-8]\n",
    "0x1004: CFA=RBP+16: RBP=[CFA-16], RIP=[CFA-8]\n",
    "0x101f: CFA=RSP+8: RBP=same, RIP=[CFA-8]\n",
    "0x1020: CFA=RSP+8: RBP=same, RIP=undefined\n",
    "0x1030: CFA=RSP+8: RBP=same, RIP=[CFA-8]\n",
    "0x10c0: CFA=DW_OP_breg7 RSP+16, DW_OP_deref: RBP=[DW_OP_breg3 RBX+8], R12=CFA-32, "
    "R13=R14, R15=[DW_OP_consts -44, DW_OP_plus], RIP=[CFA-8]\n",
    "0x1100: CFA=RSP+8: RBX=undefined, RBP=same, R12=undefined, R13=undefined, R14=undefined, "
    "R15=undefined, RIP=[CFA-8]\n",
    "0x1101: CFA=RSP+16: RBX=[CFA-16], RBP=same, R12=undefined, R13=undefined, R14=undefined, "
    "R15=undefined, RIP=[CFA-8]\n",
};

TEST_P(CfiWriterTest, DwarfdumpInterpretsTheRulesGiven) {
  std::string out =
      run("llvm-dwarfdump-22 " + std::string(eh() ? "--eh-frame " : "--debug-frame ") + path_.string() + " 2>&1");
  ASSERT_EQ(out.find("error"), std::string::npos) << out;
  for (const char* line : kDwarfdumpRows) EXPECT_NE(out.find(line), std::string::npos) << line << "\n---\n" << out;
}

// cie_undefined (the quick file's callee-saved registers): the CIE states them undefined, and
// every row reads as llvm-dwarfdump reads the file that states them row by row (above), save
// that a function whose rows name none of them (unlisted unchanged) now says "same" for each,
// which is what no rule meant. The bare SFrame function's FDE needs no byte for them.
TEST(CfiWriterCieUndefined, RowsReadAsWhenEachRowStatesThem) {
  const std::vector<uint16_t> callee_saved = {x64::rbx, x64::r12, x64::r13, x64::r14, x64::r15};
  const dwarf::CfiWriterOptions options{Arch::X86_64, Endian::Little, 8, 0, callee_saved};
  const auto fns = functions();
  const auto path = write_symbol_file("cie-undefined", dwarf::write_debug_frame(fns, options),
                                      false, 0x1000, 0x110);
  const std::string out = run("llvm-dwarfdump-22 --debug-frame " + path.string() + " 2>&1");
  std::filesystem::remove(path);
  ASSERT_EQ(out.find("error"), std::string::npos) << out;
  EXPECT_NE(out.find("DW_CFA_undefined: RBX"), std::string::npos) << "not in the CIE\n" << out;
  const std::string same = "RBX=same, R12=same, R13=same, R14=same, R15=same, ";
  const std::vector<std::string> want = {
      "0x1000: CFA=RSP+8: " + same.substr(0, 10) + "RBP=same, " + same.substr(10) + "RIP=[CFA-8]\n",
      "0x1004: CFA=RBP+16: " + same.substr(0, 10) + "RBP=[CFA-16], " + same.substr(10) +
          "RIP=[CFA-8]\n",
      kDwarfdumpRows[7],
      kDwarfdumpRows[8],
  };
  for (const std::string& line : want) EXPECT_NE(out.find(line), std::string::npos) << line << "\n---\n" << out;

  // Bare SFrame functions alone: the CIE grows by a word once, each FDE shrinks by one.
  std::vector<dwarf::CfiFunction> bare = {fns.back(), fns.back(), fns.back()};
  for (size_t i = 1; i < bare.size(); ++i) {
    bare[i].start += 0x10 * i;
    bare[i].end += 0x10 * i;
    for (dwarf::CfiRow& row : bare[i].rows) row.address += 0x10 * i;
  }
  const auto each_row = dwarf::write_debug_frame(bare, {Arch::X86_64, Endian::Little, 8, 0, {}});
  const auto in_cie = dwarf::write_debug_frame(bare, options);
  EXPECT_EQ(in_cie.size() + 2 * 8, each_row.size());
}

// join_adjacent (GDB's files): functions() follow each other with no gap, so they share one
// FDE, and every row still reads as given: each function's first row is stated by what changed
// from the last, which a register the previous function named and this one does not must
// undo. A fifth function, adjacent too, whose first row comes 4 bytes after its start, gets
// an FDE of its own: before that row it has no rule, which joining would have replaced.
TEST(CfiWriterJoin, AdjacentFunctionsShareAnFdeWithTheSameRows) {
  auto fns = functions();
  fns.push_back({0x1110, 0x1120, {{0x1114, rule(sp(16), RegRule::at_cfa(-8), RegRule::unchanged())}}});
  const auto path = write_symbol_file(
      "join", dwarf::write_debug_frame(fns, {Arch::X86_64, Endian::Little, 8, 256, {}}), false, 0x1000,
      0x120);

  const std::string frames = run("readelf --debug-dump=frames " + path.string() + " 2>&1");
  EXPECT_EQ(frames.find("Warning"), std::string::npos) << frames;
  size_t fdes = 0;
  for (size_t at = frames.find(" FDE "); at != std::string::npos; at = frames.find(" FDE ", at + 1)) ++fdes;
  EXPECT_EQ(fdes, 2u) << frames;
  EXPECT_NE(frames.find("FDE cie=00000000 pc=0000000000001000..0000000000001110"), std::string::npos) << frames;
  EXPECT_NE(frames.find("FDE cie=00000000 pc=0000000000001110..0000000000001120"), std::string::npos) << frames;

  const std::string rows = run("llvm-dwarfdump-22 --debug-frame " + path.string() + " 2>&1");
  EXPECT_EQ(rows.find("error"), std::string::npos) << rows;
  for (const char* line : kDwarfdumpRows) EXPECT_NE(rows.find(line), std::string::npos) << line << "\n---\n" << rows;
  EXPECT_NE(rows.find("0x1110: CFA=unspecified\n"), std::string::npos) << rows;
  EXPECT_NE(rows.find("0x1114: CFA=RSP+16: RBP=same, RIP=[CFA-8]\n"), std::string::npos) << rows;
  std::filesystem::remove(path);
}

// Rows given by rule index state exactly what rows given by rule do (whose bytes readelf and
// llvm-dwarfdump check above): in both sections, with functions joined into one FDE or not,
// and with the two forms taking turns, so that each goes on from where the other left a
// joined FDE.
TEST(CfiWriterRuleRows, SameBytesAsRowsGivenByRule) {
  auto fns = functions();
  fns.push_back({0x1110, 0x1120, {{0x1114, rule(sp(16), RegRule::at_cfa(-8), RegRule::unchanged())}}});
  fns.push_back({0x1120, 0x1130, {{0x1120, rule(sp(8), RegRule::at_cfa(-8), RegRule::unchanged())},
                                   {0x1121, rule(sp(16), RegRule::at_cfa(-8), RegRule::at_cfa(-16))}}});
  // The table: each distinct rule once, as a caller keeping one per distinct row would.
  std::vector<UnwindRule> rules;
  std::vector<std::vector<dwarf::CfiRuleRow>> indexed;
  for (const dwarf::CfiFunction& fn : fns) {
    auto& rows = indexed.emplace_back();
    for (const dwarf::CfiRow& row : fn.rows) {
      auto it = std::find(rules.begin(), rules.end(), row.rule);
      if (it == rules.end()) it = rules.insert(rules.end(), row.rule);
      rows.push_back({row.address, static_cast<uint32_t>(it - rules.begin())});
    }
  }
  for (const dwarf::CfiSection section : {dwarf::CfiSection::DebugFrame, dwarf::CfiSection::EhFrame}) {
    for (const size_t join : {size_t{0}, size_t{256}}) {
      const dwarf::CfiWriterOptions options{Arch::X86_64, Endian::Little, 8, join, {}};
      dwarf::CfiWriter by_rule(section, options, 0x1130);
      for (const dwarf::CfiFunction& fn : fns) by_rule.add(fn);
      const std::vector<uint8_t> want = std::move(by_rule).finish();
      for (const int turns : {0, 1, 2}) {  // every function by index; then every other one
        dwarf::CfiWriter by_index(section, options, 0x1130);
        for (size_t i = 0; i < fns.size(); ++i) {
          if (turns != 0 && i % 2 == static_cast<size_t>(turns - 1)) by_index.add(fns[i]);
          else by_index.add(fns[i].start, fns[i].end, indexed[i], rules);
        }
        EXPECT_EQ(std::move(by_index).finish(), want)
            << (section == dwarf::CfiSection::EhFrame ? "eh_frame" : "debug_frame") << " join " << join
            << " turns " << turns;
      }
    }
  }
}

// Registers numbered 128 and up are kept apart from the usual ones in the writer; a register
// a row names and the next does not goes back to "same value" whatever its number, and a
// row's registers are stated by ascending number. The rows: a function saving rbx and DWARF
// register 130 (readelf: "bad register: r130" for x86-64), then restoring both.
TEST(CfiWriterRegisters, HighNumberedRegistersAreStatedAndForgottenLikeOthers) {
  const RegRule ra = RegRule::at_cfa(-8);
  const std::vector<dwarf::CfiFunction> fns = {
      {0x2000, 0x2010,
       {{0x2000, rule(sp(8), ra, RegRule::unchanged())},
        {0x2002, rule(sp(24), ra, RegRule::unchanged(),
                      {{130, RegRule::at_cfa(-16)}, {x64::rbx, RegRule::at_cfa(-24)}})},
        {0x2008, rule(sp(8), ra, RegRule::unchanged())}}}};
  const auto path = write_symbol_file(
      "high", dwarf::write_debug_frame(fns, {Arch::X86_64, Endian::Little, 8, 0, {}}), false, 0x2000, 0x10);
  const std::string frames = run("readelf --debug-dump=frames " + path.string() + " 2>&1");
  std::filesystem::remove(path);
  for (const char* lines : {"  DW_CFA_advance_loc: 2 to 0000000000002002\n"
                            "  DW_CFA_def_cfa: r7 (rsp) ofs 24\n"
                            "  DW_CFA_offset: r3 (rbx) at cfa-24\n"
                            "  DW_CFA_offset_extended_sf: bad register: r130 at cfa-16\n"
                            "  DW_CFA_advance_loc: 6 to 0000000000002008\n"
                            "  DW_CFA_def_cfa: r7 (rsp) ofs 8\n"
                            "  DW_CFA_same_value: r3 (rbx)\n"
                            "  DW_CFA_same_value: bad register: r130\n"})
    EXPECT_NE(frames.find(lines), std::string::npos) << lines << "\n---\n" << frames;
}

}  // namespace
}  // namespace unwindkit
