// Cold fragments (prologue/fragments.h): code only jumps enter, whose frame is the jumping
// function's. Built at test time with the machine's gcc and GNU as (-Wa,--gsframe, so each
// file has both the compiler's .eh_frame and .sframe); the expected saves are the compiler's
// CFI as readelf --debug-dump=frames-interp prints it, the fragments readelf -s's `.cold`
// symbols. The walker's rules (Module::sframe_rule) and the side file's (cfi_functions) are
// both held against it. Assembly cases give the fragments nothing may be claimed of.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/unwind/modules.h"

namespace {

using namespace unwindkit;
namespace fs = std::filesystem;

// readelf's x86_64 column names of the callee-saved registers, and their DWARF numbers.
const std::map<std::string, uint16_t> kCalleeSaved = {
    {"rbx", 3}, {"rbp", 6}, {"r12", 12}, {"r13", 13}, {"r14", 14}, {"r15", 15}};

struct CfiRow {
  uint64_t loc;
  std::map<std::string, std::string> cells;  // column → "c-16", "u", ...
};

// The rows of the FDE starting at `start`, from readelf --debug-dump=frames-interp.
std::vector<CfiRow> cfi_rows(const std::string& file, uint64_t start) {
  std::istringstream text(test::run_output("readelf --debug-dump=frames-interp " + file));
  static const std::regex fde(R"(FDE cie=\w+ pc=([0-9a-f]+)\.\.([0-9a-f]+))");
  std::vector<CfiRow> rows;
  std::vector<std::string> columns;
  bool in = false;
  for (std::string line; std::getline(text, line);) {
    std::smatch m;
    if (std::regex_search(line, m, fde)) {
      in = std::stoull(m[1].str(), nullptr, 16) == start;
      continue;
    }
    if (!in) continue;
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    if (tokens.empty()) {
      if (!rows.empty()) break;
      continue;
    }
    if (tokens[0] == "LOC") {
      columns.assign(tokens.begin() + 1, tokens.end());
    } else if (tokens.size() == columns.size() + 1) {
      CfiRow row{std::stoull(tokens[0], nullptr, 16), {}};
      for (size_t i = 0; i < columns.size(); ++i) row.cells[columns[i]] = tokens[i + 1];
      rows.push_back(row);
    }
  }
  return rows;
}

// The FUNC symbols of `file` whose names end in `suffix`, by name.
std::map<std::string, uint64_t> functions(const std::string& file, const std::string& suffix) {
  std::istringstream text(test::run_output("readelf -sW " + file));
  std::map<std::string, uint64_t> out;
  for (std::string line; std::getline(text, line);) {
    std::istringstream words(line);
    std::vector<std::string> t;
    for (std::string w; words >> w;) t.push_back(w);
    if (t.size() == 8 && t[3] == "FUNC" && t[7].size() > suffix.size() &&
        t[7].ends_with(suffix))
      out[t[7]] = std::stoull(t[1], nullptr, 16);
  }
  return out;
}

class Fragments : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("uk-fragments-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `command` run in the test's folder; false when it fails (its output is printed).
  bool build(const std::string& command) {
    const std::string out =
        test::run_output("cd " + dir_.string() + " && " + command + " 2>&1; echo \"rc=$?\"");
    if (out.ends_with("rc=0\n")) return true;
    ADD_FAILURE() << command << ":\n" << out;
    return false;
  }

  // The walker's rule at `pc` of the module `file` (linked at its own addresses).
  static UnwindRule rule_at(unwind::Module& m, uint64_t pc) {
    auto r = m.sframe_rule(pc);
    EXPECT_TRUE(r && *r) << pc;
    return r && *r ? **r : UnwindRule{};
  }

  fs::path dir_;
};

// What the rule says of each callee-saved register: "c-N" saved at CFA-N, "u" unchanged,
// "?" unavailable (readelf's notation for the first two).
std::map<std::string, std::string> claims(const UnwindRule& rule) {
  std::map<std::string, std::string> out;
  for (const auto& [name, reg] : kCalleeSaved) {
    std::string claim = rule.unlisted == Unlisted::Unchanged ? "u" : "?";
    for (const SavedReg& s : rule.saved)
      if (s.reg == reg) claim = "c" + std::to_string(s.rule.offset);
    // The frame pointer: SFrame's own rule.
    if (reg == arch_info(rule.arch).fp)
      claim = rule.fp.kind == RegRule::Kind::AtCfa       ? "c" + std::to_string(rule.fp.offset)
              : rule.fp.kind == RegRule::Kind::Unchanged ? "u"
                                                          : "?";
    out[name] = claim;
  }
  return out;
}

// The compiler's CFI row's cells for the callee-saved registers ("u" where it has no column).
std::map<std::string, std::string> truth(const CfiRow& row) {
  std::map<std::string, std::string> out;
  for (const auto& [name, reg] : kCalleeSaved) {
    auto it = row.cells.find(name);
    out[name] = it == row.cells.end() ? "u" : it->second;
  }
  return out;
}

TEST_F(Fragments, ColdFragmentHasTheHotPartsSavesAsTheCompilersCfiStatesThem) {
  const std::string src = (test::source_dir() / "tests/programs/cold_abort.c").string();
  ASSERT_TRUE(build("gcc -O2 -Wa,--gsframe -o cold_abort " + src));
  const std::string file = (dir_ / "cold_abort").string();
  const auto cold = functions(file, ".cold");
  ASSERT_EQ(cold.count("step.cold"), 1u) << "gcc put no step.cold in " << file;

  unwind::Module module(file, file, {{0, UINT64_MAX, 0}});
  module.set_bias(0);
  auto elf = elf::ElfFile::open(file);
  ASSERT_TRUE(elf);
  const elf::Section* sframe_section = elf->section(".sframe");
  ASSERT_NE(sframe_section, nullptr);
  auto section = sframe::decode(sframe_section->data, sframe_section->addr);
  ASSERT_TRUE(section);
  const auto side = debuginfo::cfi_functions(*section, *elf, 0, section->fdes.size());

  const uint64_t start = cold.at("step.cold");
  const std::vector<CfiRow> rows = cfi_rows(file, start);
  ASSERT_FALSE(rows.empty());
  // The hot part's pushes: the compiler's CFI names slots for the fragment.
  ASSERT_NE(truth(rows.front())["rbx"], "u");
  const dwarf::CfiFunction* synthesized = nullptr;
  for (const auto& fn : side)
    if (fn.start == start) synthesized = &fn;
  ASSERT_NE(synthesized, nullptr);
  for (const CfiRow& row : rows) {
    // At the row's start and one byte on (a caller frame asks inside its call).
    for (const uint64_t pc : {row.loc, row.loc + 1}) {
      EXPECT_EQ(claims(rule_at(module, pc)), truth(row)) << "walker at " << std::hex << pc;
      const dwarf::CfiRow* in_side = nullptr;
      for (const auto& r : synthesized->rows)
        if (r.address <= pc) in_side = &r;
      ASSERT_NE(in_side, nullptr);
      EXPECT_EQ(claims(in_side->rule), truth(row)) << "side file at " << std::hex << pc;
    }
  }
}

// Fragments whose entries do not prove one state: nothing is claimed in them.
//   frag_two: jumps from two functions (f1 saved rbx, f2 rbp, both at CFA-16);
//   frag_paths: jumps from one function in two states (rbx, then r12, at CFA-16);
//   frag_called: a jump with rbx saved, and a call;
//   frag_runs_into: a jump with rbx saved, and the code before it runs on into it.
constexpr const char* kRefused = R"(
  .text
  .globl f1, f2, f3, f4, f5
  .type f1, @function
f1:
  .cfi_startproc
  push %rbx
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  test %rdi, %rdi
  jne frag_two
  pop %rbx
  .cfi_def_cfa_offset 8
  ret
  .cfi_endproc
  .type f2, @function
f2:
  .cfi_startproc
  push %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  test %rdi, %rdi
  jne frag_two
  pop %rbp
  .cfi_def_cfa_offset 8
  ret
  .cfi_endproc
  .type f3, @function
f3:
  .cfi_startproc
  push %rbx
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  test %rdi, %rdi
  jne frag_paths
  pop %rbx
  .cfi_def_cfa_offset 8
  .cfi_restore %rbx
  push %r12
  .cfi_def_cfa_offset 16
  .cfi_offset %r12, -16
  test %rsi, %rsi
  jne frag_paths
  pop %r12
  .cfi_def_cfa_offset 8
  ret
  .cfi_endproc
  .type f4, @function
f4:
  .cfi_startproc
  push %rbx
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  test %rdi, %rdi
  jne frag_called
  jne frag_runs_into
  call frag_called
  pop %rbx
  .cfi_def_cfa_offset 8
  ret
  .cfi_endproc
  .type f5, @function
f5:
  .cfi_startproc
  mov %rdi, %rax
  .cfi_endproc
  .type frag_runs_into, @function
frag_runs_into:
  .cfi_startproc
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  ud2
  .cfi_endproc
  .type frag_two, @function
frag_two:
  .cfi_startproc
  .cfi_def_cfa_offset 16
  ud2
  .cfi_endproc
  .type frag_paths, @function
frag_paths:
  .cfi_startproc
  .cfi_def_cfa_offset 16
  ud2
  .cfi_endproc
  .type frag_called, @function
frag_called:
  .cfi_startproc
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  ud2
  .cfi_endproc
)";

TEST_F(Fragments, NothingIsClaimedWhereTheJumpsDoNotProveOneState) {
  std::ofstream(dir_ / "refused.s") << kRefused;
  ASSERT_TRUE(build("gcc -shared -nostdlib -Wa,--gsframe -o refused.so refused.s"));
  const std::string file = (dir_ / "refused.so").string();
  const auto symbols = functions(file, "");
  unwind::Module module(file, file, {{0, UINT64_MAX, 0}});
  module.set_bias(0);
  for (const char* name : {"frag_two", "frag_paths", "frag_called", "frag_runs_into"}) {
    ASSERT_EQ(symbols.count(name), 1u) << name;
    const UnwindRule rule = rule_at(module, symbols.at(name));
    EXPECT_TRUE(rule.saved.empty()) << name;
    EXPECT_EQ(rule.unlisted, Unlisted::Unavailable) << name;
  }
}

}  // namespace
