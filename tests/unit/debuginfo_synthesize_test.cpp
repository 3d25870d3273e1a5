// The synthesized debug file, read back by readelf (a reference tool) and compared with the
// `.eh_frame` the compiler wrote for the same program: every row the file states must be the
// rule the compiler's CFI gives at that address, its build-id must be the module's, and the
// entry point must end the walk as the compiler's CFI for `_start` does.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"
#include "unwindkit/unwind/entry_point.h"

namespace unwindkit {
namespace {

std::string run(const std::string& command) { return test::run_output(command); }

std::filesystem::path fixture(const std::string& name, const std::string& arch = "x86_64") {
  return test::shared_dir() / "fixtures" / ("sframe-v2-" + arch) / name;
}

// One row of `readelf --debug-dump=frames-interp`: column name -> rule text ("rsp+8", "c-16", "u").
using Row = std::map<std::string, std::string>;
struct Fde {
  uint64_t start = 0, end = 0;
  std::vector<std::pair<uint64_t, Row>> rows;  // an FDE with no instructions: its CIE's row
};

// The FDEs readelf interprets in `text` (one table: .eh_frame or .debug_frame).
std::vector<Fde> parse_frames(const std::string& text) {
  static const std::regex cie_re(R"(^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE)");
  static const std::regex fde_re(R"(^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+))");
  static const std::regex row_re(R"(^([0-9a-f]{16}) (.*)$)");
  std::map<std::string, Row> cie_rows;
  std::vector<Fde> fdes;
  std::vector<std::string> columns;
  std::string cie;  // the CIE being read, if any
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, cie_re)) {
      cie = m[1].str();
      while (cie.size() < 8) cie.insert(0, "0");
      continue;
    }
    if (std::regex_search(line, m, fde_re)) {
      cie.clear();
      Fde fde{std::stoull(m[2].str(), nullptr, 16), std::stoull(m[3].str(), nullptr, 16), {}};
      auto it = cie_rows.find(m[1].str());
      if (it != cie_rows.end()) fde.rows.push_back({fde.start, it->second});
      fdes.push_back(fde);
      continue;
    }
    // "r30 (x30)", a register held in another, is one column: readelf pads it, not splits it.
    static const std::regex in_register(R"((r[0-9]+) \()");
    line = std::regex_replace(line, in_register, "$1(");
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    if (!tokens.empty() && tokens[0] == "LOC") {
      columns.assign(tokens.begin() + 1, tokens.end());
      continue;
    }
    if (std::regex_match(line, m, row_re) && tokens.size() == columns.size() + 1) {
      Row row;
      for (size_t i = 0; i < columns.size(); ++i) row[columns[i]] = tokens[i + 1];
      if (!cie.empty()) {
        cie_rows[cie] = row;
      } else if (!fdes.empty()) {
        uint64_t loc = std::stoull(tokens[0], nullptr, 16);
        auto& rows = fdes.back().rows;
        if (!rows.empty() && rows.back().first == loc) rows.back().second = row;
        else rows.push_back({loc, row});
      }
    }
  }
  return fdes;
}

// The row in effect at `pc`, or nullptr.
const Row* row_at(const std::vector<Fde>& fdes, uint64_t pc) {
  for (const Fde& fde : fdes) {
    if (pc < fde.start || pc >= fde.end) continue;
    const Row* found = nullptr;
    for (const auto& [loc, row] : fde.rows)
      if (loc <= pc) found = &row;
    return found;
  }
  return nullptr;
}

// readelf prints `u` both for a register no instruction mentions and for DW_CFA_undefined;
// for a callee-saved register such as rbp, no rule means "unchanged" to every debugger, which
// our writer states as DW_CFA_same_value (`s`): the two are read alike.
// Likewise the AArch64 return address "in x30" (r30), where LR still holds it, is the
// compiler's unmentioned `u`.
std::string column(const Row& row, const std::string& name) {
  auto it = row.find(name);
  if (it == row.end()) return "u";
  if ((name == "rbp" || name == "x29") && it->second == "s") return "u";
  if (name == "ra" && it->second.starts_with("r30(")) return "u";
  return it->second;
}

// The [start, end) of each PLT section (`.plt`, `.plt.sec`, `.plt.got`) of `path`, from readelf.
std::vector<std::pair<uint64_t, uint64_t>> plt_ranges(const std::string& path) {
  static const std::regex re(R"(\] (\.plt[.a-z]*) +[A-Z]+ +([0-9a-f]+) [0-9a-f]+\s+([0-9a-f]+))");
  std::vector<std::pair<uint64_t, uint64_t>> out;
  const std::string text = run("readelf -SW " + path + " 2>&1");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    const uint64_t start = std::stoull((*it)[2].str(), nullptr, 16);
    out.emplace_back(start, start + std::stoull((*it)[3].str(), nullptr, 16));
  }
  return out;
}

std::string build_id_line(const std::string& path) {
  static const std::regex re(R"(Build ID: ([0-9a-f]+))");
  std::smatch m;
  std::string out = run("readelf -n " + path + " 2>&1");
  return std::regex_search(out, m, re) ? m[1].str() : "";
}

class SynthesizeTest : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::vector<uint8_t>& bytes, const std::string& name) {
    auto path = std::filesystem::temp_directory_path() /
                ("unwindkit-synth-" + std::to_string(::getpid()) + "-" + name + ".debug");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    written_.push_back(path);
    return path;
  }
  // The module without .eh_frame (symbols kept, so function extents are known): what a
  // synthesized file is for.
  std::string bare_copy(const std::string& module_name, const std::string& arch) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("unwindkit-synth-" + std::to_string(::getpid()) + "-bare-" + arch + "-" + module_name);
    written_.push_back(path);
    const std::string objcopy = arch == "aarch64" ? "aarch64-linux-gnu-objcopy" : "objcopy";
    run(objcopy + " -R .eh_frame -R .eh_frame_hdr " + fixture("intact/" + module_name, arch).string() +
        " " + path.string());
    return path.string();
  }

  // Every row of the CFI synthesized for the module without .eh_frame against the compiler's
  // .eh_frame of the intact build: same CFA, same return address and frame pointer (`fp`)
  // rules. A dynamic link's every FDE has SFrame too (a static one's libc has none). GDB's file
  // holds it as .debug_frame, LLDB's as .eh_frame (LLDB names functions from that only).
  void expect_rows_match_eh_frame(const std::string& module_name, const std::string& arch = "x86_64",
                                  const std::string& fp = "rbp", bool every_fde = true) {
    for (auto names : {debuginfo::FallbackNames::None, debuginfo::FallbackNames::Lldb}) {
      const bool lldb = names == debuginfo::FallbackNames::Lldb;
      SCOPED_TRACE(lldb ? "LLDB's file" : "GDB's file");
      expect_rows_match_eh_frame(module_name, arch, fp, every_fde, names,
                                 lldb ? "Contents of the .eh_frame section" : "Contents of the .debug_frame section");
    }
  }
  // The same, for the quick file (no analysis): rows as above, and every callee-saved register
  // (`callee_saved`, readelf's names) undefined in every row outside a PLT, never a slot or
  // "same value" the code may not keep.
  void expect_quick_rows_match_eh_frame(const std::string& module_name, const std::string& arch,
                                        const std::string& fp, bool every_fde,
                                        const std::vector<std::string>& callee_saved) {
    SCOPED_TRACE("LLDB's quick file");
    expect_rows_match_eh_frame(module_name, arch, fp, every_fde, debuginfo::FallbackNames::Lldb,
                               "Contents of the .eh_frame section", callee_saved);
  }
  void expect_rows_match_eh_frame(const std::string& module_name, const std::string& arch,
                                  const std::string& fp, bool every_fde, debuginfo::FallbackNames names,
                                  const std::string& section_line,
                                  std::optional<std::vector<std::string>> quick_callee_saved = std::nullopt) {
    const std::string module = fixture("intact/" + module_name, arch).string();
    // The quick file is made of the module read without its code, as the servers read it.
    auto file = elf::ElfFile::open(bare_copy(module_name, arch),
                                   quick_callee_saved ? elf::ElfFile::Contents::NoCode
                                                      : elf::ElfFile::Contents::Whole);
    ASSERT_TRUE(file) << file.error().to_string();
    debuginfo::SynthesizeOptions options;
    options.fallback_names = names;
    options.analyze = !quick_callee_saved;
    auto made = debuginfo::synthesize(*file, options);
    ASSERT_TRUE(made) << made.error().to_string();
    ASSERT_FALSE(made->bytes.empty());
    EXPECT_TRUE(made->left_out.empty());
    const bool lldb_file = names == debuginfo::FallbackNames::Lldb;
    const std::string out = write(made->bytes, module_name).string();
    const std::vector<std::pair<uint64_t, uint64_t>> plts = plt_ranges(out);

    EXPECT_EQ(build_id_line(out), build_id_line(module));
    EXPECT_FALSE(build_id_line(module).empty());

    const std::string ours_text = run("readelf --debug-dump=frames-interp " + out + " 2>&1");
    ASSERT_NE(ours_text.find(section_line), std::string::npos) << ours_text;
    ASSERT_EQ(ours_text.find("Warning"), std::string::npos) << ours_text;
    const std::vector<Fde> ours = parse_frames(ours_text);
    const std::vector<Fde> truth = parse_frames(run("readelf --debug-dump=frames-interp " + module + " 2>&1"));
    ASSERT_FALSE(ours.empty());
    size_t compared = 0;
    for (const Fde& fde : ours) {
      for (const auto& [loc, row] : fde.rows) {
        const Row* want = row_at(truth, loc);
        ASSERT_NE(want, nullptr) << module_name << ": no .eh_frame row at 0x" << std::hex << loc;
        if (column(*want, "CFA") == "exp") continue;  // a PLT's CFA expression: SFrame states it by PC mask
        ++compared;
        const bool in_plt = std::any_of(plts.begin(), plts.end(),
                                        [&](const auto& r) { return loc >= r.first && loc < r.second; });
        // (The outermost frame, the entry point's, has no caller to restore registers for.)
        const bool outermost = row.contains("ra") && row.at("ra") == "u";
        for (const std::string& reg : quick_callee_saved.value_or(std::vector<std::string>{})) {
          if (in_plt || outermost) continue;
          ASSERT_TRUE(row.contains(reg)) << module_name << " at 0x" << std::hex << loc << ": " << reg << " not stated";
          EXPECT_EQ(row.at(reg), "u") << module_name << " at 0x" << std::hex << loc << ": " << reg;
        }
        EXPECT_EQ(column(row, "CFA"), column(*want, "CFA")) << module_name << " at 0x" << std::hex << loc;
        EXPECT_EQ(column(row, "ra"), column(*want, "ra")) << module_name << " at 0x" << std::hex << loc;
        EXPECT_EQ(column(row, fp), column(*want, fp)) << module_name << " at 0x" << std::hex << loc;
      }
    }
    EXPECT_GE(compared, 10u) << module_name;
    // Every function the compiler gave CFI in .text has an FDE here over the same range;
    // in GDB's file, functions with no gap between them share one (CfiWriterOptions::
    // join_adjacent), so there it lies inside one, whose row at the function's start (stated
    // by what changed, or not at all where nothing did) is the compiler's first row.
    size_t covered = 0;
    for (const Fde& want : truth) {
      for (const Fde& fde : ours) {
        const bool same = fde.start == want.start && fde.end == want.end;
        const bool inside = fde.start <= want.start && want.end <= fde.end;
        if (!(lldb_file ? same : inside) || want.rows.empty()) continue;
        ++covered;
        if (fde.start == want.start) continue;  // its own FDE: its rows are compared above
        const Row* got = row_at(ours, want.start);
        ASSERT_NE(got, nullptr) << module_name << " at 0x" << std::hex << want.start;
        const Row& first = want.rows.front().second;
        if (column(first, "CFA") == "exp") continue;
        EXPECT_EQ(column(*got, "CFA"), column(first, "CFA")) << module_name << " at 0x" << std::hex << want.start;
        EXPECT_EQ(column(*got, "ra"), column(first, "ra")) << module_name << " at 0x" << std::hex << want.start;
        EXPECT_EQ(column(*got, fp), column(first, fp)) << module_name << " at 0x" << std::hex << want.start;
      }
    }
    if (every_fde) {
      EXPECT_GE(covered + 2, truth.size()) << module_name << ": " << covered << " of " << truth.size();
    } else {
      EXPECT_GT(covered, 3u) << module_name;
    }
  }

  void TearDown() override {
    for (const auto& p : written_) std::filesystem::remove(p);
  }
  std::vector<std::filesystem::path> written_;
};

TEST_F(SynthesizeTest, ProgramRowsAreTheCompilersCfi) {
  expect_rows_match_eh_frame("prog");
}

TEST_F(SynthesizeTest, SharedLibraryRowsAreTheCompilersCfi) {
  expect_rows_match_eh_frame("libfix.so");
}

TEST_F(SynthesizeTest, AArch64StaticProgramRowsAreTheCompilersCfi) {
  expect_rows_match_eh_frame("prog", "aarch64", "x29", false);
}

const std::vector<std::string> kX86CalleeSaved = {"rbx", "r12", "r13", "r14", "r15"};

TEST_F(SynthesizeTest, QuickProgramRowsAreTheCompilersCfiWithCalleeSavedUndefined) {
  expect_quick_rows_match_eh_frame("prog", "x86_64", "rbp", true, kX86CalleeSaved);
}

TEST_F(SynthesizeTest, QuickSharedLibraryRowsAreTheCompilersCfiWithCalleeSavedUndefined) {
  expect_quick_rows_match_eh_frame("libfix.so", "x86_64", "rbp", true, kX86CalleeSaved);
}

TEST_F(SynthesizeTest, QuickAArch64StaticProgramRowsAreTheCompilersCfiWithCalleeSavedUndefined) {
  expect_quick_rows_match_eh_frame("prog", "aarch64", "x29", false,
                                   {"x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28"});
}

// _start has no SFrame; its rule ends the walk as crt1's own CFI does (RA undefined; CFA
// rsp+8 on x86_64, sp+0 on AArch64).
class EntryPointTest : public SynthesizeTest, public ::testing::WithParamInterface<const char*> {};

INSTANTIATE_TEST_SUITE_P(Arch, EntryPointTest, ::testing::Values("x86_64", "aarch64"));

TEST_P(EntryPointTest, EndsTheWalkAsItsOwnCfiDoes) {
  const std::string program = fixture("intact/prog", GetParam()).string();
  auto file = elf::ElfFile::open(bare_copy("prog", GetParam()));
  ASSERT_TRUE(file);
  auto rule = unwind::entry_point_rule(*file);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(rule->func_start, file->entry());
  EXPECT_TRUE(rule->outermost());

  const std::vector<Fde> truth =
      parse_frames(run("readelf --debug-dump=frames-interp " + program + " 2>&1"));
  const Row* want = row_at(truth, file->entry());
  ASSERT_NE(want, nullptr);
  auto made = debuginfo::synthesize(*file);
  ASSERT_TRUE(made);
  const std::vector<Fde> ours =
      parse_frames(run("readelf --debug-dump=frames-interp " + write(made->bytes, "entry").string() + " 2>&1"));
  // Where the module's own CFI covers the entry point, it says so itself: no rule of ours.
  auto intact = elf::ElfFile::open(program);
  ASSERT_TRUE(intact);
  EXPECT_FALSE(unwind::entry_point_rule(*intact).has_value());
  const Row* got = row_at(ours, file->entry());
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(column(*got, "CFA"), column(*want, "CFA"));
  EXPECT_EQ(column(*got, "ra"), "u");
  EXPECT_EQ(column(*want, "ra"), "u");
  // It stops where the compiler's _start FDE stops at the latest (the next function's SFrame).
  for (const Fde& fde : truth)
    if (fde.start == file->entry()) {
      EXPECT_LE(rule->func_end, fde.end + 16);
    }
}

// The stripped copy has no .symtab and no .eh_frame: names come from .dynsym; for LLDB, the
// others come from LLDB itself, which names a function it finds only in .eh_frame
// `___lldb_unnamed_symbol_<hex>` (so its file has an .eh_frame FDE at `main` and no such
// symbol); GDB's file names none (GDB's `??`).
TEST_F(SynthesizeTest, NamesFollowTheChosenConvention) {
  auto intact = elf::ElfFile::open(fixture("intact/prog").string());
  auto stripped = elf::ElfFile::open(fixture("stripped/prog").string());
  ASSERT_TRUE(intact && stripped);
  ASSERT_EQ(stripped->section(".symtab"), nullptr);
  ASSERT_EQ(stripped->section(".eh_frame"), nullptr);
  auto symbols_of_intact = intact->symbols();
  ASSERT_TRUE(symbols_of_intact);
  uint64_t main_sym = 0, main_size = 0;
  for (const auto& s : *symbols_of_intact)
    if (s.name == "main") main_sym = s.value, main_size = s.size;
  ASSERT_NE(main_sym, 0u);
  auto lldb = debuginfo::synthesize(*stripped);
  ASSERT_TRUE(lldb && !lldb->bytes.empty());
  const std::string lldb_path = write(lldb->bytes, "lldb").string();
  std::string symbols = run("readelf -sW " + lldb_path);
  EXPECT_EQ(symbols.find("___lldb_unnamed_symbol"), std::string::npos) << symbols;
  const std::string frames = run("readelf --debug-dump=frames " + lldb_path + " 2>&1");
  ASSERT_NE(frames.find("Contents of the .eh_frame section"), std::string::npos) << frames;
  char want[64];
  std::snprintf(want, sizeof want, "pc=%016llx..%016llx", static_cast<unsigned long long>(main_sym),
                static_cast<unsigned long long>(main_sym + main_size));
  EXPECT_NE(frames.find(want), std::string::npos) << want << "\n" << frames;

  // A module with an .eh_frame of its own (here one holding only its terminator) keeps
  // .debug_frame and LLDB's names in .symtab: LLDB would take our .eh_frame for its own.
  const auto with_eh = std::filesystem::temp_directory_path() /
                       ("unwindkit-synth-" + std::to_string(::getpid()) + "-with-eh");
  const auto terminator = std::filesystem::temp_directory_path() /
                          ("unwindkit-synth-" + std::to_string(::getpid()) + "-terminator");
  written_.push_back(with_eh);
  written_.push_back(terminator);
  std::ofstream(terminator, std::ios::binary).write("\0\0\0\0", 4);
  run("objcopy --add-section .eh_frame=" + terminator.string() + " " + fixture("stripped/prog").string() +
      " " + with_eh.string());
  auto own_eh = elf::ElfFile::open(with_eh.string());
  ASSERT_TRUE(own_eh);
  ASSERT_NE(own_eh->section(".eh_frame"), nullptr);
  auto lldb_debug_frame = debuginfo::synthesize(*own_eh);
  ASSERT_TRUE(lldb_debug_frame && !lldb_debug_frame->bytes.empty());
  const std::string debug_frame_path = write(lldb_debug_frame->bytes, "lldb-debug-frame").string();
  symbols = run("readelf -sW " + debug_frame_path);
  std::snprintf(want, sizeof want, "___lldb_unnamed_symbol_%llx", static_cast<unsigned long long>(main_sym));
  EXPECT_NE(symbols.find(want), std::string::npos) << symbols;
  EXPECT_NE(run("readelf --debug-dump=frames " + debug_frame_path + " 2>&1").find("Contents of the .debug_frame section"),
            std::string::npos);

  debuginfo::SynthesizeOptions none;
  none.fallback_names = debuginfo::FallbackNames::None;
  auto plain = debuginfo::synthesize(*stripped, none);
  ASSERT_TRUE(plain && !plain->bytes.empty());
  symbols = run("readelf -sW " + write(plain->bytes, "plain").string());
  EXPECT_EQ(symbols.find("___lldb_unnamed_symbol"), std::string::npos) << symbols;
  // With .symtab present its names win (symbols kept, .eh_frame removed).
  auto named_module = elf::ElfFile::open(bare_copy("prog", "x86_64"));
  ASSERT_TRUE(named_module);
  auto named = debuginfo::synthesize(*named_module);
  ASSERT_TRUE(named);
  symbols = run("readelf -sW " + write(named->bytes, "named").string());
  EXPECT_TRUE(std::regex_search(symbols, std::regex(R"(FUNC +GLOBAL +DEFAULT +\d+ main\n)"))) << symbols;
}

// LLDB's file of a module with at least `dwarf_unit_from` functions carries one empty DWARF 4
// unit and an empty line table (so that LLDB reads it through its DWARF plug-in), as
// llvm-dwarfdump reads them; a smaller module's has none; GDB's carries no DWARF at all.
TEST_F(SynthesizeTest, LldbFileHasAnEmptyDwarfUnit) {
  auto stripped = elf::ElfFile::open(fixture("stripped/prog").string());
  ASSERT_TRUE(stripped);
  // The fixture's functions, counted by readelf in the default file's .eh_frame (one FDE
  // each); the fixture has far fewer than the default threshold, so that file has no DWARF.
  auto small = debuginfo::synthesize(*stripped);
  ASSERT_TRUE(small && !small->bytes.empty());
  const std::string small_path = write(small->bytes, "few").string();
  const std::string frames = run("readelf --debug-dump=frames " + small_path + " 2>&1");
  size_t fdes = 0;
  for (size_t at = frames.find(" FDE cie="); at != std::string::npos; at = frames.find(" FDE cie=", at + 1))
    ++fdes;
  ASSERT_GT(fdes, 2u) << frames;
  ASSERT_LT(fdes, debuginfo::SynthesizeOptions{}.dwarf_unit_from);
  EXPECT_EQ(run("readelf -SW " + small_path).find(".debug_info"), std::string::npos);
  // One function more than the module has: still none; exactly as many: the unit.
  debuginfo::SynthesizeOptions above;
  above.dwarf_unit_from = fdes + 1;
  auto few = debuginfo::synthesize(*stripped, above);
  ASSERT_TRUE(few && !few->bytes.empty());
  EXPECT_EQ(run("readelf -SW " + write(few->bytes, "few-above").string()).find(".debug_info"),
            std::string::npos);
  debuginfo::SynthesizeOptions at_threshold;
  at_threshold.dwarf_unit_from = fdes;
  auto lldb = debuginfo::synthesize(*stripped, at_threshold);
  ASSERT_TRUE(lldb && !lldb->bytes.empty());
  const std::string path = write(lldb->bytes, "dwarf").string();
  const std::string info = run("llvm-dwarfdump-22 --debug-info --debug-line " + path + " 2>&1");
  EXPECT_EQ(info.find("error"), std::string::npos) << info;
  EXPECT_EQ(info.find("warning"), std::string::npos) << info;
  EXPECT_NE(info.find("Compile Unit: length = 0x00000008, format = DWARF32, version = 0x0004, "
                      "abbr_offset = 0x0000, addr_size = 0x08"),
            std::string::npos)
      << info;
  // No attribute and no child follow the unit's DIE.
  EXPECT_NE(info.find("\n0x0000000b: DW_TAG_compile_unit\n\n.debug_line contents:"), std::string::npos) << info;
  EXPECT_NE(info.find("version: 4"), std::string::npos) << info;
  EXPECT_NE(info.find("opcode_base: 1\n"), std::string::npos) << info;
  EXPECT_EQ(info.find("0x0000000000"), std::string::npos) << info;  // no line table rows
  const std::string verify = run("llvm-dwarfdump-22 --verify " + path + " 2>&1");
  EXPECT_NE(verify.find("No errors."), std::string::npos) << verify;

  debuginfo::SynthesizeOptions none;
  none.fallback_names = debuginfo::FallbackNames::None;
  none.dwarf_unit_from = 0;
  auto plain = debuginfo::synthesize(*stripped, none);
  ASSERT_TRUE(plain && !plain->bytes.empty());
  EXPECT_EQ(run("readelf -SW " + write(plain->bytes, "plain-dwarf").string()).find(".debug_info"), std::string::npos);
}

// A file added to a module LLDB has already made (`target symbols add`) keeps `.debug_frame`
// and LLDB's names in `.symtab`, and no DWARF: LLDB does not make that module's symbols again
// from a new `.eh_frame`.
TEST_F(SynthesizeTest, FileAddedLaterNamesFunctionsItself) {
  auto intact = elf::ElfFile::open(fixture("intact/prog").string());
  auto stripped = elf::ElfFile::open(fixture("stripped/prog").string());
  ASSERT_TRUE(intact && stripped);
  auto symbols_of_intact = intact->symbols();
  ASSERT_TRUE(symbols_of_intact);
  uint64_t main_sym = 0;
  for (const auto& s : *symbols_of_intact)
    if (s.name == "main") main_sym = s.value;
  ASSERT_NE(main_sym, 0u);
  debuginfo::SynthesizeOptions later;
  later.lldb_loads_it = false;
  auto made = debuginfo::synthesize(*stripped, later);
  ASSERT_TRUE(made && !made->bytes.empty());
  const std::string path = write(made->bytes, "later").string();
  char want[64];
  std::snprintf(want, sizeof want, "___lldb_unnamed_symbol_%llx", static_cast<unsigned long long>(main_sym));
  EXPECT_NE(run("readelf -sW " + path).find(want), std::string::npos);
  const std::string sections = run("readelf -SW " + path);
  EXPECT_NE(sections.find(" .debug_frame "), std::string::npos) << sections;
  EXPECT_EQ(sections.find(" .eh_frame "), std::string::npos) << sections;
  EXPECT_EQ(sections.find(".debug_info"), std::string::npos) << sections;
}

// GDB's file (no fallback names) holds every allocated section of the module, at its address
// (GDB warns about each one a separate debug file lacks, readelf is the truth here), and no
// symbol where the module names no function (GDB weighs every symbol of a separate debug file
// as it looks up each frame's pc).
TEST_F(SynthesizeTest, GdbFileHoldsTheModulesSectionsAndNoSymbol) {
  const std::string module_path = fixture("stripped/prog").string();
  auto stripped = elf::ElfFile::open(module_path);
  ASSERT_TRUE(stripped);
  debuginfo::SynthesizeOptions none;
  none.fallback_names = debuginfo::FallbackNames::None;
  auto made = debuginfo::synthesize(*stripped, none);
  ASSERT_TRUE(made && !made->bytes.empty());
  const std::string path = write(made->bytes, "gdb-file").string();
  // "name address" of every allocated section readelf lists, with its flags.
  static const std::regex section_re(R"(\]\s+(\S+)\s+\S+\s+([0-9a-f]{16})\s+\S+\s+\S+\s+\S+\s+(\S*A\S*)\s)");
  auto sections = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, section_re) && m[2].str() != std::string(16, '0'))
        out.push_back(m[1].str() + " " + m[2].str());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> allocated = sections(run("readelf -SW " + module_path));
  ASSERT_GT(allocated.size(), 10u);
  EXPECT_EQ(sections(run("readelf -SW " + path)), allocated);
  const std::string symbols = run("readelf -sW " + path);
  EXPECT_EQ(symbols.find("FUNC"), std::string::npos) << symbols;
}

// A section failing the strict checks gives no CFI at all, and says where it is wrong.
TEST_F(SynthesizeTest, CorruptSFrameGivesNothing) {
  auto bytes = test::read_file(fixture("stripped/prog"));
  auto file = elf::ElfFile::open(fixture("stripped/prog").string());
  ASSERT_TRUE(file);
  const elf::Section* sframe = file->section(".sframe");
  ASSERT_NE(sframe, nullptr);
  bytes[sframe->offset + 2] = 9;  // sfh_preamble.sfp_version: no such version
  auto image = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  auto corrupt = elf::ElfFile::parse(image, "corrupt");
  ASSERT_TRUE(corrupt);
  auto made = debuginfo::synthesize(*corrupt);
  ASSERT_TRUE(made);
  EXPECT_TRUE(made->bytes.empty());
  ASSERT_FALSE(made->left_out.empty());
  EXPECT_EQ(made->left_out.front().section, ".sframe");
}

// The quick file (its rows read by the strict checks' walk) refuses what only the strict
// checks see: a row past its function's end, which decode() reads as any other. Both files
// give nothing and name that row's start, where the byte was set.
TEST_F(SynthesizeTest, RowPastItsFunctionGivesNoQuickFile) {
  auto bytes = test::read_file(fixture("stripped/prog"));
  auto file = elf::ElfFile::open(fixture("stripped/prog").string());
  ASSERT_TRUE(file);
  const elf::Section* found = file->section(".sframe");
  ASSERT_NE(found, nullptr);
  auto section = sframe::decode(found->data, found->addr);
  ASSERT_TRUE(section);
  // The last row of a function under 255 bytes whose row starts are single bytes.
  std::optional<std::pair<size_t, size_t>> row;
  for (size_t i = 0; i < section->fdes.size() && !row; ++i) {
    const sframe::Fde& fde = section->fdes[i];
    if (fde.fre_type() == sframe::kFreTypeAddr1 && fde.size < 0xff && !fde.pcmask() &&
        fde.fres.size() > 1)
      row = {i, fde.fres.size() - 1};
  }
  ASSERT_TRUE(row);
  const sframe::Fre& fre = section->fdes[row->first].fres[row->second];
  bytes[found->offset + fre.offset] = 0xff;  // its start, past the function's size
  auto image = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  auto corrupt = elf::ElfFile::parse(image, "corrupt");
  ASSERT_TRUE(corrupt);
  ASSERT_TRUE(sframe::decode(corrupt->section(".sframe")->data, found->addr));
  for (bool analyze : {false, true}) {
    SCOPED_TRACE(analyze ? "analyzed" : "quick");
    debuginfo::SynthesizeOptions options;
    options.fallback_names = debuginfo::FallbackNames::Lldb;
    options.analyze = analyze;
    auto made = debuginfo::synthesize(*corrupt, options);
    ASSERT_TRUE(made) << made.error().to_string();
    EXPECT_TRUE(made->bytes.empty());
    ASSERT_FALSE(made->left_out.empty());
    const Error& why = made->left_out.front();
    EXPECT_EQ(why.section, ".sframe");
    EXPECT_EQ(why.offset, fre.offset);
    EXPECT_EQ(why.field, "fde[" + std::to_string(row->first) + "].fre[" +
                             std::to_string(row->second) + "].start");
  }
}

// A PCMASK function's rows are stated once per repetition; past the module's limit on those
// (a section may repeat a function's rows every byte of its text), no file states them: the
// analyzed file and the entry point's (where the entry point is in that function and has no
// rule of its own: here e_entry moved to the PLT) fail, and the quick file has no CFI, each
// naming the FDE. The fixture's PLT (`[m]` in readelf's dump) repeats its rows every 16 bytes.
TEST_F(SynthesizeTest, RepeatedRowsPastTheLimitGiveNoFile) {
  auto bytes = test::read_file(fixture("stripped/prog"));
  auto file = elf::ElfFile::open(fixture("stripped/prog").string());
  ASSERT_TRUE(file) << file.error().to_string();
  const elf::Section* found = file->section(".sframe");
  ASSERT_NE(found, nullptr);
  auto section = sframe::decode(found->data, found->addr);
  ASSERT_TRUE(section);
  size_t plt = section->fdes.size();
  uint64_t repeated = 0;
  for (size_t i = 0; i < section->fdes.size(); ++i) {
    const sframe::Fde& fde = section->fdes[i];
    if (!fde.pcmask()) continue;
    plt = i;
    repeated += (fde.size + section->rep_size(fde) - 1) / section->rep_size(fde) * fde.fres.size();
  }
  ASSERT_LT(plt, section->fdes.size());
  ASSERT_GT(repeated, 1u);
  const uint64_t plt_start = section->fdes[plt].func_start;
  for (size_t i = 0; i < 8; ++i)  // e_entry, little-endian at 0x18
    bytes[0x18 + i] = static_cast<uint8_t>(plt_start >> (8 * i));
  auto moved = elf::ElfFile::parse(
      std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), "entry in the PLT");
  ASSERT_TRUE(moved);
  ASSERT_EQ(moved->entry(), plt_start);
  struct Kind {
    const char* name;
    const elf::ElfFile* module;
    bool analyze, entry_point_only;
  };
  for (const Kind& kind : {Kind{"analyzed", &*file, true, false},
                           Kind{"quick", &*file, false, false},
                           Kind{"entry point", &*moved, true, true}}) {
    SCOPED_TRACE(kind.name);
    debuginfo::SynthesizeOptions options{debuginfo::FallbackNames::None};
    options.analyze = kind.analyze;
    options.entry_point_only = kind.entry_point_only;
    options.max_repeated_rows = repeated;
    auto made = debuginfo::synthesize(*kind.module, options);
    ASSERT_TRUE(made) << made.error().to_string();
    EXPECT_FALSE(made->bytes.empty());
    EXPECT_TRUE(made->left_out.empty());

    options.max_repeated_rows = repeated - 1;
    made = debuginfo::synthesize(*kind.module, options);
    const Error why = made ? (made->left_out.empty() ? Error{} : made->left_out.front())
                           : made.error();
    if (made) {
      EXPECT_TRUE(made->bytes.empty());
    }
    EXPECT_EQ(made.has_value(), !kind.analyze);
    EXPECT_EQ(why.section, ".sframe");
    EXPECT_EQ(why.offset, section->fdes[plt].start_field);
    EXPECT_EQ(why.field, "fde[" + std::to_string(plt) + "].rep_size");
  }
}

// A module with neither SFrame nor .trace has nothing to add.
TEST_F(SynthesizeTest, NoTablesNothingToAdd) {
  auto file = elf::ElfFile::open("/bin/true");
  ASSERT_TRUE(file);
  ASSERT_EQ(file->section(".sframe"), nullptr);
  auto made = debuginfo::synthesize(*file);
  ASSERT_TRUE(made) << made.error().to_string();
  EXPECT_TRUE(made->bytes.empty());
  EXPECT_TRUE(made->left_out.empty());
}

// A module whose own .eh_frame covers every SFrame function (the intact build: gcc with
// --gsframe writes both) gets no .debug_frame from us: a debugger would take ours over its
// own CFI (GDB 13 prefers a debug file's .debug_frame), and its CFI is already right.
TEST_F(SynthesizeTest, FunctionsTheModulesCfiCoversAreLeftToIt) {
  const std::string module = fixture("intact/prog").string();
  ASSERT_NE(run("readelf -S " + module).find(".eh_frame "), std::string::npos);
  auto file = elf::ElfFile::open(module);
  ASSERT_TRUE(file) << file.error().to_string();
  ASSERT_NE(file->section(".sframe"), nullptr);
  auto made = debuginfo::synthesize(*file);
  ASSERT_TRUE(made) << made.error().to_string();
  EXPECT_TRUE(made->bytes.empty());
}

// Where the module's own CFI covers every function its SFrame index lists, the rest of the
// section is not read: a row past its function's end (which the strict checks refuse, as
// RowPastItsFunctionGivesNoQuickFile shows) leaves nothing out of a file that adds nothing.
TEST_F(SynthesizeTest, SectionOfAModuleItsCfiCoversIsNotChecked) {
  const std::string module = fixture("intact/prog").string();
  auto bytes = test::read_file(module);
  auto file = elf::ElfFile::open(module);
  ASSERT_TRUE(file);
  const elf::Section* found = file->section(".sframe");
  ASSERT_NE(found, nullptr);
  auto section = sframe::decode(found->data, found->addr);
  ASSERT_TRUE(section);
  const auto fde = std::find_if(section->fdes.begin(), section->fdes.end(), [](const auto& f) {
    return f.fre_type() == sframe::kFreTypeAddr1 && f.size < 0xff && !f.pcmask() &&
           f.fres.size() > 1;
  });
  ASSERT_NE(fde, section->fdes.end());
  bytes[found->offset + fde->fres.back().offset] = 0xff;  // its start, past the function's size
  auto corrupt = elf::ElfFile::parse(
      std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), "corrupt");
  ASSERT_TRUE(corrupt);
  ASSERT_FALSE(sframe::validate(corrupt->section(".sframe")->data, found->addr, {{0, ~0ull}},
                                sframe::Format::SFrame)
                   .empty());
  for (bool analyze : {false, true}) {
    SCOPED_TRACE(analyze ? "analyzed" : "quick");
    debuginfo::SynthesizeOptions options;
    options.analyze = analyze;
    auto made = debuginfo::synthesize(*corrupt, options);
    ASSERT_TRUE(made) << made.error().to_string();
    EXPECT_TRUE(made->bytes.empty());
    EXPECT_TRUE(made->left_out.empty()) << made->left_out.front().to_string();
  }
}

// sframe_beyond_cfi: no function of the intact build is beyond its own CFI, each is beyond
// another module's (and beyond none), and an index that cannot be read says where.
TEST_F(SynthesizeTest, SFrameBeyondCfiAsksTheIndexOfEachFunction) {
  auto file = elf::ElfFile::open(fixture("intact/prog").string());
  auto other_file = elf::ElfFile::open("/bin/true");
  ASSERT_TRUE(file && other_file);
  const auto found = sframe::find_section(*file);
  ASSERT_TRUE(found);
  const Bytes index = found->section->data;
  // The CFI of the modules named: 'o' the intact build's own, 't' /bin/true's.
  const auto beyond = [&](std::string_view which, Bytes bytes) {
    std::vector<dwarf::CfiTables> tables;
    for (char c : which) {
      auto t = dwarf::CfiTables::open(c == 'o' ? *file : *other_file);
      EXPECT_TRUE(t && !t->empty());
      if (t) tables.push_back(std::move(*t));
    }
    return debuginfo::sframe_beyond_cfi(bytes, found->section->addr, found->format, tables);
  };
  auto mine = beyond("o", index);
  ASSERT_TRUE(mine) << mine.error().to_string();
  EXPECT_FALSE(*mine);
  for (std::string_view tables : {"t", ""}) {
    auto theirs = beyond(tables, index);
    ASSERT_TRUE(theirs);
    EXPECT_TRUE(*theirs) << tables;
  }
  auto both = beyond("to", index);
  ASSERT_TRUE(both);
  EXPECT_FALSE(*both);
  auto cut = beyond("o", index.first(index.size() / 2));
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().section, ".sframe");
}

// Functions the caller does not want are neither analyzed nor returned; the others come
// back as the whole section gives them (what synthesize asks, leaving out functions a module's
// own CFI describes).
TEST_F(SynthesizeTest, AnalyzesOnlyTheFunctionsWanted) {
  auto file = elf::ElfFile::open(fixture("stripped/prog").string());
  ASSERT_TRUE(file) << file.error().to_string();
  const auto table = sframe::find_section(*file);
  ASSERT_TRUE(table);
  auto section = sframe::decode(table->section->data, table->section->addr, table->format);
  ASSERT_TRUE(section) << section.error().to_string();
  ASSERT_GE(section->fdes.size(), 4u);
  const auto all = debuginfo::cfi_functions(*section, *file, 0, section->fdes.size());
  std::vector<uint64_t> asked;
  const auto odd = debuginfo::cfi_functions(*section, *file, 0, section->fdes.size(),
                                            [&](uint64_t start) {
                                              asked.push_back(start);
                                              return asked.size() % 2 == 0;
                                            });
  ASSERT_EQ(asked.size(), section->fdes.size());
  std::vector<const dwarf::CfiFunction*> want;
  for (const dwarf::CfiFunction& fn : all)
    for (size_t i = 1; i < asked.size(); i += 2)
      if (fn.start == asked[i]) want.push_back(&fn);
  ASSERT_FALSE(want.empty());
  ASSERT_EQ(odd.size(), want.size());
  for (size_t i = 0; i < odd.size(); ++i) {
    EXPECT_EQ(odd[i].start, want[i]->start);
    EXPECT_EQ(odd[i].end, want[i]->end);
    ASSERT_EQ(odd[i].rows.size(), want[i]->rows.size());
    for (size_t r = 0; r < odd[i].rows.size(); ++r) {
      EXPECT_EQ(odd[i].rows[r].address, want[i]->rows[r].address);
      EXPECT_EQ(odd[i].rows[r].rule, want[i]->rows[r].rule);
    }
  }
}

}  // namespace
}  // namespace unwindkit
