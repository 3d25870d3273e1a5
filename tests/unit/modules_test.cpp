// The module map and symbolizer on the shared fixture's core (x86_64, PIE + libfix.so +
// libc). Expected load addresses come from GDB's backtrace of the same core (truth-bt.txt:
// main at 0x555555555070, lib_entry's caller frames) and the files' own symbol tables
// as `nm` prints them.
#include "unwindkit/unwind/modules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "test_support.h"
#include "unwindkit/unwind/symbolizer.h"

namespace unwindkit::unwind {
namespace {

std::filesystem::path fixture() { return test::shared_dir() / "fixtures" / "sframe-v2-x86_64"; }

uint64_t nm_address(const std::string& file, const std::string& symbol) {
  const std::string cmd = "nm " + file + " | grep ' " + symbol + "$'";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[256] = {};
  const bool ok = p && fgets(buf, sizeof buf, p);
  if (p) pclose(p);
  return ok ? std::stoull(buf, nullptr, 16) : 0;
}

Result<CoreFile> open_core() {
  CoreOptions o;
  o.executable = (fixture() / "intact" / "prog").string();
  o.search_dirs = {(fixture() / "intact").string()};
  return CoreFile::open((fixture() / "intact" / "core.prog").string(), o);
}

TEST(Modules, BiasFromMappingsAndSegments) {
  auto core = open_core();
  ASSERT_TRUE(core) << core.error().to_string();
  auto map = ModuleMap::from_core(*core);
  // truth-bt.txt: `main=0x555555555070`; nm gives main's ELF address in prog.
  const std::string prog = (fixture() / "intact" / "prog").string();
  const uint64_t main_elf = nm_address(prog, "main");
  ASSERT_NE(main_elf, 0u);
  Module* m = map.find(0x555555555070);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->bias(), 0x555555555070 - main_elf);
  EXPECT_EQ(m->elf_address(0x555555555070), main_elf);
  EXPECT_EQ(map.find(0x10), nullptr);
}

TEST(Modules, TablesAreFoundPerModule) {
  auto core = open_core();
  ASSERT_TRUE(core) << core.error().to_string();
  auto map = ModuleMap::from_core(*core);
  // truth-bt.txt frame #5: lib_entry in libfix.so at 0x7ffff7fbc17b.
  Module* lib = map.find(0x7ffff7fbc17b);
  ASSERT_NE(lib, nullptr);
  EXPECT_NE(lib->path().find("libfix.so"), std::string::npos);
  auto sf = lib->sframe();
  ASSERT_TRUE(sf) << sf.error().to_string();
  EXPECT_NE(*sf, nullptr);
  auto cfi = lib->cfi_rule(0x7ffff7fbc17b - 1);
  ASSERT_TRUE(cfi) << cfi.error().to_string();
  ASSERT_TRUE(*cfi);
  EXPECT_LE((*cfi)->func_start, 0x7ffff7fbc17bu - 1);  // runtime addresses
  EXPECT_GT((*cfi)->func_end, 0x7ffff7fbc17bu - 1);
  auto sfr = lib->sframe_rule(0x7ffff7fbc17b - 1);
  ASSERT_TRUE(sfr) << sfr.error().to_string();
  ASSERT_TRUE(*sfr);
  EXPECT_EQ((*sfr)->source, Source::SFrame);
}

TEST(Symbolizer, NamesTheFixtureFrames) {
  auto core = open_core();
  ASSERT_TRUE(core) << core.error().to_string();
  auto map = ModuleMap::from_core(*core);
  Symbolizer sym;
  // truth-bt.txt: #5 0x7ffff7fbc17b in lib_entry, #28 0x555555555079 in main.
  Module* lib = map.find(0x7ffff7fbc17b);
  ASSERT_NE(lib, nullptr);
  auto hit = sym.lookup(*lib, CodeAddress::return_address(0x7ffff7fbc17b));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->name, "lib_entry");
  Module* prog = map.find(0x555555555079);
  ASSERT_NE(prog, nullptr);
  hit = sym.lookup(*prog, CodeAddress::return_address(0x555555555079));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->name, "main");
  EXPECT_EQ(hit->offset, 0x555555555079u - 0x555555555070u);
}

TEST(Symbolizer, CoveringFunctionPrefersGlobalAliasAndSizedSymbols) {
  std::vector<elf::Symbol> fns = {
      {"local_alias", 0x1000, 0x20, 2, 0, 1},
      {"global_name", 0x1000, 0x20, 2, 1, 1},
      {"label", 0x1030, 0, 2, 0, 1},
  };
  std::sort(fns.begin(), fns.end(), [](const auto& a, const auto& b) {
    return a.value != b.value ? a.value < b.value : a.bind == 1;
  });
  ASSERT_NE(covering_function(fns, 0x1010), nullptr);
  EXPECT_EQ(covering_function(fns, 0x1010)->name, "global_name");
  EXPECT_EQ(covering_function(fns, 0x1020), nullptr);  // past the end, before the label
  ASSERT_NE(covering_function(fns, 0x1040), nullptr);
  EXPECT_EQ(covering_function(fns, 0x1040)->name, "label");
  EXPECT_EQ(covering_function(fns, 0xfff), nullptr);
}

}  // namespace
}  // namespace unwindkit::unwind
