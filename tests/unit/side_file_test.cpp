// The side-file ELF writer's output, read back by readelf (a reference tool): headers,
// placeholder sections, the build-id note and the symbols must be what the spec asked for.
// Expected values are written by hand from the spec below.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "unwindkit/elf/side_file.h"
#include "test_support.h"

namespace unwindkit {
namespace {

std::string run(const std::string& cmd) { return test::run_output(cmd); }

// Lines of `text` as whitespace-separated tokens ("[ 1]" is read as "[1]").
std::vector<std::vector<std::string>> token_lines(std::string text) {
  for (size_t at; (at = text.find("[ ")) != std::string::npos;) text.erase(at + 1, 1);
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) tokens.push_back(w);
    lines.push_back(tokens);
  }
  return lines;
}

bool has_line(const std::string& text, const std::vector<std::string>& want) {
  for (const auto& line : token_lines(text))
    if (line == want) return true;
  return false;
}

class SideFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    elf::SideFileSpec spec;
    spec.machine = 62;  // EM_X86_64
    spec.type = 3;      // ET_DYN
    spec.build_id = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x00, 0x11,
                     0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb};
    spec.sections = {{".note.gnu.build-id", 0x2 /* A */, 0x338, 0x24, 4},
                     {".text", 0x6 /* AX */, 0x1040, 0x200, 16},
                     {".data", 0x3 /* WA */, 0x4000, 0x10, 8}};
    spec.functions = {{"main", 0x1040, 0x30}, {"__unwindkit_fn_1100", 0x1100, 0x12},
                      {"elsewhere", 0x9000, 0}};
    spec.debug_frame = {1, 2, 3, 4, 5, 6, 7, 8};
    auto bytes = elf::write_side_file(spec);
    path_ = std::filesystem::temp_directory_path() /
            ("unwindkit-side-file-" + std::to_string(::getpid()) + ".debug");
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string readelf(const std::string& options) {
    return run("readelf " + options + " " + path_.string() + " 2>&1");
  }
  std::filesystem::path path_;
};

TEST_F(SideFileTest, HeaderSaysWhatTheModuleIs) {
  std::string out = readelf("-hW");
  EXPECT_TRUE(has_line(out, {"Class:", "ELF64"})) << out;
  EXPECT_TRUE(has_line(out, {"Data:", "2's", "complement,", "little", "endian"})) << out;
  EXPECT_TRUE(has_line(out, {"Type:", "DYN", "(Shared", "object", "file)"})) << out;
  EXPECT_TRUE(has_line(out, {"Machine:", "Advanced", "Micro", "Devices", "X86-64"})) << out;
  EXPECT_EQ(out.find("Warning"), std::string::npos) << out;
}

TEST_F(SideFileTest, SectionsArePlaceholdersThenTheTables) {
  std::string out = readelf("-SW");
  // [Nr] Name Type Address Off Size ES Flg Lk Inf Al
  EXPECT_TRUE(has_line(out, {"[1]", ".text", "NOBITS", "0000000000001040", "000000", "000200",
                             "00", "AX", "0", "0", "16"})) << out;
  EXPECT_TRUE(has_line(out, {"[2]", ".data", "NOBITS", "0000000000004000", "000000", "000010",
                             "00", "WA", "0", "0", "8"})) << out;
  EXPECT_TRUE(has_line(out, {"[3]", ".note.gnu.build-id", "NOTE", "0000000000000338", "000040",
                             "000024", "00", "A", "0", "0", "4"})) << out;
  // The note ends at 0x64; .debug_frame is 8-aligned after it.
  EXPECT_TRUE(has_line(out, {"[4]", ".debug_frame", "PROGBITS", "0000000000000000", "000068",
                             "000008", "00", "0", "0", "8"})) << out;
  EXPECT_TRUE(has_line(out, {"[5]", ".symtab", "SYMTAB", "0000000000000000", "000070", "000060",
                             "18", "6", "1", "8"})) << out;
}

TEST_F(SideFileTest, BuildIdNoteIsTheModules) {
  std::string out = readelf("-n");
  EXPECT_TRUE(has_line(out, {"Build", "ID:", "0123456789abcdef00112233445566778899aabb"})) << out;
}

TEST_F(SideFileTest, DebugFrameBytesAreCopied) {
  std::string out = readelf("-x .debug_frame");
  EXPECT_NE(out.find("0x00000000 01020304 05060708"), std::string::npos) << out;
}

TEST_F(SideFileTest, FunctionsAreGlobalFuncSymbolsInTheirSection) {
  std::string out = readelf("-sW");
  // Num: Value Size Type Bind Vis Ndx Name
  EXPECT_TRUE(has_line(out, {"1:", "0000000000001040", "48", "FUNC", "GLOBAL", "DEFAULT", "1",
                             "main"})) << out;
  EXPECT_TRUE(has_line(out, {"2:", "0000000000001100", "18", "FUNC", "GLOBAL", "DEFAULT", "1",
                             "__unwindkit_fn_1100"})) << out;
  EXPECT_TRUE(has_line(out, {"3:", "0000000000009000", "0", "FUNC", "GLOBAL", "DEFAULT", "ABS",
                             "elsewhere"})) << out;
}

}  // namespace
}  // namespace unwindkit
