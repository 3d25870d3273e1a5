// `.trace` restated as DWARF (trace/to_dwarf.h), read back by binutils (objdump, readelf):
// every row of a hand-written line table must come back with its address, file and line, and
// every routine as a DW_TAG_subprogram. Expected values are the input below.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "unwindkit/elf/side_file.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/encode.h"
#include "unwindkit/trace/to_dwarf.h"
#include "test_support.h"

namespace unwindkit::trace {
namespace {

std::string run(const std::string& cmd) { return test::run_output(cmd); }

class TraceToDwarfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two routines in two files; `helper` starts after a gap, so two line sequences.
    ModuleLines m;
    m.code_begin = 0x401000;
    m.code_size = 0x80;
    m.files = {"main.c", "helper.c"};
    m.routines = {{"main", {{0x401000, 0x401008, 0, 10}, {0x401008, 0x401020, 0, 12},
                            {0x401020, 0x401030, 1, 3}}},
                  {"helper", {{0x401040, 0x401050, 1, 40}, {0x401050, 0x401060, 1, 38}}}};
    auto bytes = encode(std::span(&m, 1), 8);
    ASSERT_TRUE(bytes);
    auto section = decode(*bytes, 8);
    ASSERT_TRUE(section);
    auto dwarf = to_dwarf(*section, Endian::Little);
    elf::SideFileSpec spec;
    spec.machine = 62;  // EM_X86_64
    spec.type = 2;      // ET_EXEC
    spec.sections = {{".text", 0x6 /* SHF_ALLOC | SHF_EXECINSTR */, 0x401000, 0x80, 16}};
    spec.debug_sections = {{".debug_abbrev", dwarf.debug_abbrev},
                           {".debug_info", dwarf.debug_info},
                           {".debug_line", dwarf.debug_line}};
    auto file = elf::write_side_file(spec);
    path_ = std::filesystem::temp_directory_path() /
            ("unwindkit-to-dwarf-" + std::to_string(::getpid()) + ".debug");
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(TraceToDwarfTest, ObjdumpReadsEveryRow) {
  const std::string out = run("objdump --dwarf=decodedline " + path_.string() + " 2>&1");
  for (const char* row : {"main.c +10 +0x401000", "main.c +12 +0x401008",
                          "helper.c +3 +0x401020", "helper.c +40 +0x401040",
                          "helper.c +38 +0x401050"})
    EXPECT_TRUE(std::regex_search(out, std::regex(row))) << row << "\n" << out;
  // Each sequence ends where its last row does.
  EXPECT_TRUE(std::regex_search(out, std::regex("- +0x401030"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("- +0x401060"))) << out;
}

TEST_F(TraceToDwarfTest, ReadelfSeesOneUnitWithASubprogramPerRoutine) {
  const std::string out = run("readelf --debug-dump=info " + path_.string() + " 2>&1");
  EXPECT_NE(out.find("DW_TAG_compile_unit"), std::string::npos) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("DW_AT_name +: main\\n +<[0-9a-f]+> +DW_AT_low_pc +: 0x401000\\n +<[0-9a-f]+> +DW_AT_high_pc +: 0x30")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("DW_AT_name +: helper\\n +<[0-9a-f]+> +DW_AT_low_pc +: 0x401040\\n +<[0-9a-f]+> +DW_AT_high_pc +: 0x20")))
      << out;
}

}  // namespace
}  // namespace unwindkit::trace
