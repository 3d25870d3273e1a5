// The register table (arch.h) against tools no one here wrote: LLVM's assemblers give each
// register name its DWARF number (`.cfi_offset <name>` read back with readelf), clang's code
// generators save exactly the ABI's callee-saved registers, and GDB knows every name we
// hand it.
#include "unwindkit/arch.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace unwindkit {
namespace {

namespace fs = std::filesystem;

std::string run(const std::string& cmd) { return test::run_output(cmd); }

struct Target {
  Arch arch;
  const char* triple;        // LLVM's
  const char* asm_prefix;    // register prefix in the assembler's syntax
  const char* gdb_arch;      // `set architecture`
};
constexpr Target kTargets[] = {
    {Arch::X86_64, "x86_64-linux-gnu", "%", "i386:x86-64"},
    {Arch::AArch64, "aarch64-linux-gnu", "", "aarch64"},
    {Arch::S390x, "s390x-linux-gnu", "%", "s390:64-bit"},
    {Arch::I386, "i386-linux-gnu", "%", "i386"},
};

class Scratch {
 public:
  Scratch() : dir_(fs::temp_directory_path() / ("uk-arch-test-" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  fs::path file(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path path(const std::string& name) const { return dir_ / name; }

 private:
  fs::path dir_;
};

// DWARF register number per CFA offset, from readelf's text of the FDEs in `object`.
std::map<int, int> saved_by_offset(const fs::path& object) {
  const std::string text = run("readelf --debug-dump=frames " + object.string());
  std::map<int, int> out;
  const std::regex row(R"(DW_CFA_offset(?:_extended)?: r(\d+)\b.* at cfa-(\d+))");
  const size_t fde = text.find(" FDE ");
  if (fde == std::string::npos) return out;
  for (std::sregex_iterator it(text.begin() + static_cast<std::ptrdiff_t>(fde), text.end(), row),
       end;
       it != end; ++it)
    out[std::stoi((*it)[2])] = std::stoi((*it)[1]);
  return out;
}

TEST(ArchTable, DwarfNumbersAreTheAssemblers) {
  Scratch tmp;
  for (const Target& t : kTargets) {
    const ArchInfo& info = arch_info(t.arch);
    // One `.cfi_offset` per register, each at its own CFA offset; the PC has no name the
    // CFI directives take except where it is the return-address column.
    std::string s = ".text\nf:\n.cfi_startproc\n";
    std::map<int, const RegisterInfo*> expect;
    int offset = 16;
    for (const RegisterInfo& r : info.registers) {
      if (info.pc && r.dwarf == *info.pc && *info.pc != info.ra) continue;
      s += ".cfi_offset " + std::string(t.asm_prefix) + std::string(r.gdb_name) + ", -" +
           std::to_string(offset) + "\n";
      expect[offset] = &r;
      offset += 8;
    }
    s += "nop\n.cfi_endproc\n";
    const fs::path src = tmp.file(std::string(info.name) + ".s", s);
    const fs::path obj = tmp.path(std::string(info.name) + ".o");
    ASSERT_EQ(std::system(("llvm-mc-22 -triple=" + std::string(t.triple) + " -filetype=obj " +
                           src.string() + " -o " + obj.string())
                              .c_str()),
              0)
        << info.name;
    const auto got = saved_by_offset(obj);
    ASSERT_EQ(got.size(), expect.size()) << info.name;
    for (const auto& [off, r] : expect)
      EXPECT_EQ(got.at(off), r->dwarf) << info.name << " " << r->gdb_name;
  }
}

TEST(ArchTable, CalleeSavedAreWhatClangSaves) {
  Scratch tmp;
  for (const Target& t : kTargets) {
    const ArchInfo& info = arch_info(t.arch);
    // A function that clobbers every register but the stack pointer and the PC: the code
    // generator saves (and the CFI records) exactly the ABI's callee-saved ones, plus the
    // return address and, on s390x, the stack pointer its store-multiple takes along.
    std::string clobbers;
    for (const RegisterInfo& r : info.registers)
      if (r.dwarf != info.sp && r.dwarf != info.pc)
        clobbers += "\"" + std::string(r.gdb_name) + "\",";
    const fs::path src = tmp.file(std::string(info.name) + ".c",
                                  "void f(void) { __asm__ volatile(\"\" ::: " + clobbers +
                                      "\"memory\"); }\n");
    const fs::path obj = tmp.path(std::string(info.name) + ".o");
    ASSERT_EQ(std::system(("clang-22 --target=" + std::string(t.triple) +
                           " -O2 -fomit-frame-pointer -fasynchronous-unwind-tables -c " +
                           src.string() + " -o " + obj.string())
                              .c_str()),
              0)
        << info.name;
    std::set<uint16_t> saved;
    for (const auto& [off, r] : saved_by_offset(obj))
      if (r != info.ra && r != info.sp) saved.insert(static_cast<uint16_t>(r));
    const auto ours = callee_saved_registers(t.arch);
    EXPECT_EQ(saved, std::set<uint16_t>(ours.begin(), ours.end())) << info.name;
  }
}

TEST(ArchTable, GdbKnowsEveryName) {
  for (const Target& t : kTargets) {
    const ArchInfo& info = arch_info(t.arch);
    const std::string text = run(std::string("gdb-multiarch -nx -batch -ex 'set architecture ") +
                                 t.gdb_arch + "' -ex 'maint print registers' 2>/dev/null");
    std::set<std::string> names;
    const std::regex row(R"((?:^|\n) (\S+) )");
    for (std::sregex_iterator it(text.begin(), text.end(), row), end;
         it != end; ++it)
      names.insert((*it)[1]);
    ASSERT_GT(names.size(), 8u) << t.gdb_arch;
    for (const RegisterInfo& r : info.registers)
      EXPECT_TRUE(names.count(std::string(r.gdb_name))) << t.gdb_arch << " " << r.gdb_name;
    EXPECT_TRUE(names.count(std::string(info.gdb_pc_name))) << t.gdb_arch;
  }
}

TEST(ArchTable, Lookups) {
  EXPECT_EQ(reg_name(Arch::AArch64, reg::aarch64::x29), "fp");
  EXPECT_EQ(reg_name(Arch::S390x, 25), "f10");
  EXPECT_EQ(reg_name(Arch::X86_64, 200), "r200");  // not in the table
  EXPECT_EQ(general_registers(Arch::AArch64).size(), 33u);  // x0-x30, sp, pc
  EXPECT_EQ(general_registers(Arch::S390x).size(), 16u);
  for (Arch a : {Arch::X86_64, Arch::AArch64, Arch::S390x, Arch::I386}) {
    const ArchInfo& info = arch_info(a);
    EXPECT_EQ(info.arch, a);
    uint16_t previous = 0;
    for (const RegisterInfo& r : info.registers) {
      if (&r != info.registers.data()) {
        EXPECT_GT(r.dwarf, previous) << info.name;  // DWARF order
      }
      previous = r.dwarf;
      EXPECT_EQ(register_info(a, r.dwarf), &r);
    }
  }
}

}  // namespace
}  // namespace unwindkit
