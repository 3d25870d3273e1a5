// DWARF CFI lowering, checked row by row against binutils' own interpretation of the same
// tables (`readelf --debug-dump=frames-interp`), on the system's libc and on programs gcc
// builds at test time; the signal trampoline against the kernel's ucontext layout.
#include "unwindkit/dwarf/cfi.h"

#include <gtest/gtest.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "unwindkit/elf/elf_file.h"
#include "test_support.h"

namespace unwindkit {
namespace {

namespace fs = std::filesystem;
namespace x = reg::x86_64;

constexpr const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";

std::string run(const std::string& cmd) { return test::run_output(cmd); }

// One row of readelf's interpreted CFI: the address and the text of each column.
struct ReadelfRow {
  uint64_t loc = 0;
  std::map<std::string, std::string> cells;  // "CFA", "rbp", "ra", ...
};

struct ReadelfFde {
  uint64_t start = 0, end = 0;
  std::string augmentation;  // of its CIE
  std::vector<ReadelfRow> rows;
};

// Parses `readelf -wF` output, keeping FDEs of `section` (".eh_frame" / ".debug_frame").
std::vector<ReadelfFde> parse_readelf(const std::string& text, const std::string& section) {
  std::vector<ReadelfFde> fdes;
  std::map<std::string, std::string> cie_aug;  // CIE offset → augmentation
  std::istringstream in(text);
  std::string line, current;
  std::vector<std::string> columns;
  bool keep = false, in_fde = false;
  while (std::getline(in, line)) {
    if (line.rfind("Contents of the ", 0) == 0) {
      keep = line.find(section + " section") != std::string::npos;
      in_fde = false;
      continue;
    }
    if (!keep) continue;
    std::istringstream ls(line);
    std::vector<std::string> w;
    for (std::string t; ls >> t;) w.push_back(t);
    if (w.size() >= 4 && w[3] == "CIE") {
      cie_aug[w[0]] = w.size() > 4 ? w[4] : "";
      in_fde = false;  // the CIE's own rows (initial instructions) describe no code
    } else if (w.size() >= 6 && w[3] == "FDE") {
      in_fde = true;
      ReadelfFde f;
      const std::string cie = w[4].substr(4);  // "cie=0000252c"
      f.augmentation = cie_aug.count(cie) ? cie_aug[cie] : "";
      const std::string range = w[5].substr(3);  // "pc=A..B"
      f.start = std::stoull(range.substr(0, range.find("..")), nullptr, 16);
      f.end = std::stoull(range.substr(range.find("..") + 2), nullptr, 16);
      fdes.push_back(f);
      columns.clear();
    } else if (!w.empty() && w[0] == "LOC") {
      columns.assign(w.begin() + 1, w.end());
    } else if (in_fde && !columns.empty() && w.size() == columns.size() + 1 &&
               w[0].size() >= 8) {
      ReadelfRow row;
      row.loc = std::stoull(w[0], nullptr, 16);
      for (size_t i = 0; i < columns.size(); ++i) row.cells[columns[i]] = w[i + 1];
      fdes.back().rows.push_back(row);
    }
  }
  return fdes;
}

uint16_t x86_reg(const std::string& name) {
  static const std::map<std::string, uint16_t> names = {
      {"rax", 0}, {"rdx", 1}, {"rcx", 2},  {"rbx", 3},  {"rsi", 4},  {"rdi", 5},
      {"rbp", 6}, {"rsp", 7}, {"r8", 8},   {"r9", 9},   {"r10", 10}, {"r11", 11},
      {"r12", 12}, {"r13", 13}, {"r14", 14}, {"r15", 15}, {"ra", 16}};
  return names.at(name);
}

RegRule rule_for(const UnwindRule& r, uint16_t reg) {
  if (reg == x::rip) return r.ra;
  if (reg == x::rbp) return r.fp;
  for (const auto& s : r.saved)
    if (s.reg == reg) return s.rule;
  return RegRule::unchanged();
}

// Checks every row readelf shows for `section` of `path`; returns rows compared.
size_t compare_with_readelf(const std::string& path, const std::string& section) {
  auto elf = elf::ElfFile::open(path);
  EXPECT_TRUE(elf) << path;
  if (!elf) return 0;
  auto cfi = dwarf::CfiTables::open(*elf);
  EXPECT_TRUE(cfi) << cfi.error().to_string();
  if (!cfi) return 0;
  size_t compared = 0;
  for (const auto& fde : parse_readelf(run("readelf -wF " + path), section)) {
    for (const auto& row : fde.rows) {
      auto got = cfi->lookup(row.loc);
      const std::string& cfa = row.cells.at("CFA");
      if (cfa == "exp") continue;  // expressions: only some shapes lower (tested below)
      if (!got || !*got) {
        ADD_FAILURE() << "no rule at 0x" << std::hex << row.loc << ": "
                      << (got ? "no FDE" : got.error().to_string());
        continue;
      }
      const UnwindRule& r = **got;
      const auto plus = cfa.find_first_of("+-");
      EXPECT_EQ(r.cfa.kind, CfaRule::Kind::RegOffset) << std::hex << row.loc;
      EXPECT_EQ(r.cfa.reg, x86_reg(cfa.substr(0, plus))) << std::hex << row.loc;
      EXPECT_EQ(r.cfa.offset, std::stoll(cfa.substr(plus))) << std::hex << row.loc;
      EXPECT_EQ(r.signal_frame, fde.augmentation.find('S') != std::string::npos);
      for (const auto& [col, cell] : row.cells) {
        if (col == "CFA" || cell == "exp") continue;
        const uint16_t reg = x86_reg(col);
        const RegRule got_reg = rule_for(r, reg);
        if (cell == "u") {
          // Not described: callee-saved registers keep their value; the RA column
          // undefined means the outermost frame.
          if (reg == x::rip)
            EXPECT_TRUE(r.outermost()) << std::hex << row.loc;
          else
            EXPECT_EQ(got_reg, RegRule::unchanged()) << col << " at " << std::hex << row.loc;
        } else if (cell[0] == 'c') {
          EXPECT_EQ(got_reg, RegRule::at_cfa(std::stoll(cell.substr(1))))
              << col << " at " << std::hex << row.loc;
        } else if (cell[0] == 'v') {
          EXPECT_EQ(got_reg, RegRule::val_cfa(std::stoll(cell.substr(1))))
              << col << " at " << std::hex << row.loc;
        } else if (cell == "s") {
          EXPECT_EQ(got_reg, RegRule::unchanged()) << col;
        } else {
          ADD_FAILURE() << "unexpected readelf cell " << cell << " for " << col;
        }
      }
      ++compared;
    }
  }
  return compared;
}

struct Built {
  fs::path dir;
  ~Built() { fs::remove_all(dir); }
};

// Builds `source` with gcc and `flags` into a temporary folder; returns the binary's path.
std::string build(Built& b, const std::string& source, const std::string& flags) {
  b.dir = fs::temp_directory_path() / ("unwindkit-cfi-" + std::to_string(getpid()));
  fs::create_directories(b.dir);
  std::ofstream(b.dir / "t.c") << source;
  const std::string out = (b.dir / "t").string();
  const std::string cmd = "gcc " + flags + " -o " + out + " " + (b.dir / "t.c").string() + " 2>&1";
  const std::string log = run(cmd);
  EXPECT_TRUE(fs::exists(out)) << cmd << "\n" << log;
  return out;
}

constexpr const char* kProgram = R"(
  #include <alloca.h>
  #include <string.h>
  __attribute__((noinline)) int callee(int n) { char* p = alloca(n); memset(p, 1, n); return p[n / 2]; }
  __attribute__((noinline)) int saver(int a, int b) { int s = 0; for (int i = a; i < b; i++) s += callee(i); return s; }
  int main(int argc, char** argv) { (void)argv; return saver(argc, 40); }
)";

TEST(Cfi, LibcEhFrameMatchesReadelf) {
  EXPECT_GT(compare_with_readelf(kLibc, ".eh_frame"), 10000u);
}

TEST(Cfi, EhFrameOfGccProgramsMatchesReadelf) {
  for (const char* flags : {"-O0", "-O2", "-O2 -fomit-frame-pointer"}) {
    Built b;
    const auto path = build(b, kProgram, flags);
    EXPECT_GT(compare_with_readelf(path, ".eh_frame"), 3u) << flags;
  }
}

TEST(Cfi, DebugFrameOnlyMatchesReadelf) {
  Built b;
  const auto path = build(b, kProgram, "-O1 -g -fno-asynchronous-unwind-tables -fno-unwind-tables");
  // Only the C runtime's start files bring .eh_frame; the program's functions are in
  // .debug_frame, which lookups reach after .eh_frame has no FDE for them.
  auto elf = elf::ElfFile::open(path);
  ASSERT_TRUE(elf);
  auto cfi = dwarf::CfiTables::open(*elf);
  ASSERT_TRUE(cfi);
  EXPECT_TRUE(cfi->has_debug_frame());
  EXPECT_GT(compare_with_readelf(path, ".debug_frame"), 3u);
}

TEST(Cfi, FunctionEntryIsRspPlus8WithRaAtCfaMinus8) {
  // psABI: at a function's first instruction the CFA is rsp+8 and the RA is at CFA-8.
  Built b;
  const auto path = build(b, kProgram, "-O2");
  const std::string sym = run("nm " + path + " | grep ' T saver$'");
  ASSERT_FALSE(sym.empty());
  const uint64_t saver = std::stoull(sym, nullptr, 16);
  auto elf = elf::ElfFile::open(path);
  ASSERT_TRUE(elf);
  auto cfi = dwarf::CfiTables::open(*elf);
  ASSERT_TRUE(cfi);
  auto r = cfi->lookup(saver);
  ASSERT_TRUE(r && *r);
  EXPECT_EQ((*r)->cfa, (CfaRule{CfaRule::Kind::RegOffset, x::rsp, 8}));
  EXPECT_EQ((*r)->ra, RegRule::at_cfa(-8));
  EXPECT_EQ((*r)->source, Source::Cfi);
  EXPECT_FALSE((*r)->signal_frame);
  EXPECT_FALSE((*r)->outermost());
}

TEST(Cfi, LibcSignalTrampolineIsASignalFrameOverTheUcontext) {
  // glibc's __restore_rt has the only CIE with 'S'; its rules read the ucontext_t the
  // kernel put at rsp (rt_sigframe after the popped return address).
  uint64_t start = 0;
  for (const auto& fde : parse_readelf(run(std::string("readelf -wF ") + kLibc), ".eh_frame"))
    if (fde.augmentation.find('S') != std::string::npos) start = fde.start;
  ASSERT_NE(start, 0u);
  auto elf = elf::ElfFile::open(kLibc);
  ASSERT_TRUE(elf);
  auto cfi = dwarf::CfiTables::open(*elf);
  ASSERT_TRUE(cfi);
  // The FDE starts one byte before __restore_rt so that a lookup at pc-1 lands in it.
  auto r = cfi->lookup(start + 1);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(*r);
  const auto gregs = offsetof(ucontext_t, uc_mcontext.gregs);
  const auto at = [&](int greg) { return static_cast<int64_t>(gregs + greg * sizeof(greg_t)); };
  EXPECT_TRUE((*r)->signal_frame);
  EXPECT_EQ((*r)->cfa, (CfaRule{CfaRule::Kind::DerefRegOffset, x::rsp, at(REG_RSP)}));
  EXPECT_EQ((*r)->ra, RegRule::at_reg(x::rsp, at(REG_RIP)));
  EXPECT_EQ((*r)->fp, RegRule::at_reg(x::rsp, at(REG_RBP)));
  EXPECT_EQ(rule_for(**r, x::rbx), RegRule::at_reg(x::rsp, at(REG_RBX)));
  EXPECT_EQ(rule_for(**r, x::rsp), RegRule::at_reg(x::rsp, at(REG_RSP)));
}

TEST(Cfi, PltExpressionIsAnErrorNotAGuess) {
  // The .plt FDE computes the CFA with a rip-dependent expression (psABI lazy binding); we
  // do not lower it, and say so.
  Built b;
  const auto path = build(b, kProgram, "-O2 -Wl,-z,lazy");
  auto elf = elf::ElfFile::open(path);
  ASSERT_TRUE(elf);
  const auto* plt = elf->section(".plt");
  ASSERT_NE(plt, nullptr);
  auto cfi = dwarf::CfiTables::open(*elf);
  ASSERT_TRUE(cfi);
  auto r = cfi->lookup(plt->addr + 16);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().section, ".eh_frame");
  EXPECT_EQ(r.error().field, "cfa");
  EXPECT_NE(r.error().message.find("DW_OP_breg16"), std::string::npos) << r.error().message;
}

// describes() is "some FDE covers this address", as readelf lists the FDEs: true at each FDE's
// first and last byte (the PLT's too, whose rule does not lower), false just past the last
// one's end where no other FDE starts, and in the ELF header; lookup() agrees wherever asked.
TEST(Cfi, DescribesWhereReadelfListsAnFde) {
  Built b;
  const auto path = build(b, kProgram, "-O2 -Wl,-z,lazy");
  auto elf = elf::ElfFile::open(path);
  ASSERT_TRUE(elf);
  auto cfi = dwarf::CfiTables::open(*elf);
  ASSERT_TRUE(cfi);
  const auto fdes = parse_readelf(run("readelf -wF " + path), ".eh_frame");
  ASSERT_GE(fdes.size(), 3u);
  auto covered_by_readelf = [&fdes](uint64_t a) {
    for (const auto& f : fdes)
      if (a >= f.start && a < f.end) return true;
    return false;
  };
  std::vector<uint64_t> asked = {0x10};
  for (const auto& f : fdes) asked.insert(asked.end(), {f.start, f.end - 1, f.end});
  size_t outside = 0;
  for (uint64_t a : asked) {
    const bool want = covered_by_readelf(a);
    outside += want ? 0 : 1;
    EXPECT_EQ(cfi->describes(a), want) << std::hex << a;
    auto r = cfi->lookup(a);
    EXPECT_EQ(!r || *r, want) << std::hex << a;
  }
  EXPECT_GE(outside, 2u);  // the ELF header, and at least the end of the last FDE
  const auto* plt = elf->section(".plt");
  ASSERT_NE(plt, nullptr);
  EXPECT_FALSE(cfi->lookup(plt->addr + 16));
  EXPECT_TRUE(cfi->describes(plt->addr + 16));
}

// The same of libc, whose .eh_frame libdw searches through .eh_frame_hdr's table (describes()
// then reads the FDE the table names, not libdw): at each FDE's first and last byte and past
// its end, readelf's answer, and in the gaps between FDEs none.
TEST(Cfi, DescribesEveryLibcFdeAsReadelfListsIt) {
  auto elf = elf::ElfFile::open(kLibc);
  ASSERT_TRUE(elf);
  ASSERT_NE(elf->section(".eh_frame_hdr"), nullptr);
  auto cfi = dwarf::CfiTables::open(*elf);
  ASSERT_TRUE(cfi);
  auto fdes = parse_readelf(run(std::string("readelf -wF ") + kLibc), ".eh_frame");
  ASSERT_GT(fdes.size(), 1000u);
  std::sort(fdes.begin(), fdes.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  size_t outside = 0;
  for (size_t i = 0; i < fdes.size(); ++i) {
    EXPECT_TRUE(cfi->describes(fdes[i].start)) << std::hex << fdes[i].start;
    EXPECT_TRUE(cfi->describes(fdes[i].end - 1)) << std::hex << fdes[i].end - 1;
    const bool next_starts = i + 1 < fdes.size() && fdes[i + 1].start <= fdes[i].end;
    EXPECT_EQ(cfi->describes(fdes[i].end), next_starts) << std::hex << fdes[i].end;
    outside += next_starts ? 0 : 1;
  }
  EXPECT_GT(outside, 100u);
}

TEST(Cfi, NoFdeGivesNoRule) {
  auto elf = elf::ElfFile::open(kLibc);
  ASSERT_TRUE(elf);
  auto cfi = dwarf::CfiTables::open(*elf);
  ASSERT_TRUE(cfi);
  auto r = cfi->lookup(0x10);  // inside the ELF header: no code, no FDE
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(*r);
}

}  // namespace
}  // namespace unwindkit
