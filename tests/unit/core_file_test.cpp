// CoreFile against the shared fixture cores. Expected values come from the native debuggers on
// those cores and from llvm-readelf-22, as noted at each block; hostile inputs must give
// errors or warnings, never crashes.
#include "unwindkit/unwind/core_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "test_support.h"
#include "unwindkit/rules.h"

namespace unwindkit::unwind {
namespace {

namespace fs = std::filesystem;

fs::path x86_dir() { return test::shared_dir() / "fixtures/sframe-v2-x86_64"; }
fs::path a64_dir() { return test::shared_dir() / "fixtures/sframe-v2-aarch64"; }
// The fixture cores name their files under the folder they were made in (README.md there).
constexpr const char* kRecordedX86 = "/tmp/unwindkit-fixtures/sframe-v2-x86_64/intact";

CoreOptions found_in_fixture() {
  CoreOptions o;
  o.path_map = {{kRecordedX86, (x86_dir() / "intact").string()}};
  return o;
}

bool has_warning(const CoreFile& c, const std::string& a, const std::string& b = "") {
  return std::any_of(c.warnings().begin(), c.warnings().end(), [&](const std::string& w) {
    return w.find(a) != std::string::npos && w.find(b) != std::string::npos;
  });
}

std::vector<uint8_t> read(const CoreFile& c, uint64_t addr, size_t n) {
  std::vector<uint8_t> out(n);
  if (!c.memory().read(addr, out)) out.clear();
  return out;
}

TEST(CoreFile, X86_64ThreadRegistersMatchGdb) {
  auto core = CoreFile::open((x86_dir() / "intact/core.prog").string(), found_in_fixture());
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_EQ(core->arch(), Arch::X86_64);
  EXPECT_EQ(core->endian(), Endian::Little);
  // `gdb -batch -ex 'info threads' -ex 'info registers' prog core.prog` in intact/:
  // one thread, LWP 9445, stopped by SIGABRT (the program aborts).
  ASSERT_EQ(core->threads().size(), 1u);
  const CoreThread& t = core->threads()[0];
  EXPECT_EQ(t.tid, 9445);
  EXPECT_EQ(t.signal, 6);
  namespace r = reg::x86_64;
  const std::vector<std::pair<uint16_t, uint64_t>> expected = {
      {r::rax, 0x0},
      {r::rbx, 0x24e5},
      {r::rcx, 0x7ffff7e58eec},
      {r::rdx, 0x6},
      {r::rsi, 0x24e5},
      {r::rdi, 0x24e5},
      {r::rbp, 0x7ffff7dcb740},
      {r::rsp, 0x7fffffffe8a0},
      {r::r8, 0x16},
      {r::r9, 0x78787878787878},
      {r::r10, 0x8},
      {r::r11, 0x246},
      {r::r12, 0x6},
      {r::r13, 0x7fffffffee38},
      {r::r14, 0x555555557db8},
      {r::r15, 0x7ffff7ffd020},
      {49 /*rflags*/, 0x246},
      {51 /*cs*/, 0x33},
      {52 /*ss*/, 0x2b},
  };
  for (const auto& [reg, value] : expected) EXPECT_EQ(t.regs.get(reg), value) << "reg " << reg;
  EXPECT_EQ(t.regs.pc(), 0x7ffff7e58eecu);
  EXPECT_EQ(t.regs.sp(), 0x7fffffffe8a0u);
}

TEST(CoreFile, X86_64MappedFilesMatchReadelf) {
  auto core = CoreFile::open((x86_dir() / "intact/core.prog").string(), found_in_fixture());
  ASSERT_TRUE(core) << core.error().to_string();
  // `llvm-readelf-22 -n core.prog`: NT_FILE with 20 entries, page size 4096.
  const auto& m = core->mapped_files();
  ASSERT_EQ(m.size(), 20u);
  EXPECT_EQ(m[0].start, 0x555555554000u);
  EXPECT_EQ(m[0].end, 0x555555555000u);
  EXPECT_EQ(m[0].file_offset, 0u);
  EXPECT_EQ(m[0].path, std::string(kRecordedX86) + "/prog");
  EXPECT_EQ(m[5].start, 0x7ffff7dce000u);
  EXPECT_EQ(m[5].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(m[6].file_offset, 0x26u * 4096);
  EXPECT_EQ(m[19].start, 0x7ffff7ffd000u);
  EXPECT_EQ(m[19].end, 0x7ffff7fff000u);
  EXPECT_EQ(m[19].file_offset, 0x33u * 4096);
  EXPECT_EQ(m[19].path, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  // Resolved through path_map.
  EXPECT_EQ(m[0].resolved, (x86_dir() / "intact/prog").string());
  EXPECT_EQ(m[10].resolved, (x86_dir() / "intact/libfix.so").string());
  EXPECT_FALSE(has_warning(*core, "build-id mismatch"));
  // `gdb -batch -ex 'info auxv' prog core.prog`.
  const auto& aux = core->auxv();
  auto value = [&](uint64_t type) {
    for (const auto& [t, v] : aux)
      if (t == type) return v;
    return uint64_t{0};
  };
  EXPECT_EQ(value(6 /*AT_PAGESZ*/), 4096u);
  EXPECT_EQ(value(3 /*AT_PHDR*/), 0x555555554040u);
  EXPECT_EQ(value(9 /*AT_ENTRY*/), 0x555555555090u);
}

TEST(CoreFile, X86_64MemoryFromCoreAndFromMappedFiles) {
  auto core = CoreFile::open((x86_dir() / "intact/core.prog").string(), found_in_fixture());
  ASSERT_TRUE(core) << core.error().to_string();
  // `gdb -batch -ex 'set solib-search-path .' -ex 'x/2gx $rsp' -ex 'x/8xb ADDR' prog core.prog`:
  // the stack is in the core; _start, libfix's _init and libc's text are not (filesz 0 in
  // `readelf -l core.prog`), so they come from the files on disk.
  EXPECT_EQ(read(*core, 0x7fffffffe8a0 + 8, 8),
            (std::vector<uint8_t>{0x00, 0x87, 0x1d, 0x36, 0xb3, 0x8d, 0xb0, 0x38}));
  EXPECT_EQ(read(*core, 0x555555555090, 8),
            (std::vector<uint8_t>{0x31, 0xed, 0x49, 0x89, 0xd1, 0x5e, 0x48, 0x89}));
  EXPECT_EQ(read(*core, 0x7ffff7fbc000, 8),
            (std::vector<uint8_t>{0x48, 0x83, 0xec, 0x08, 0x48, 0x8b, 0x05, 0xc5}));
  EXPECT_EQ(read(*core, 0x7ffff7df4000, 8),
            (std::vector<uint8_t>{0xff, 0x35, 0xea, 0xcf, 0x1a, 0x00, 0xff, 0x25}));
  // A read across the end of the core's first page of prog into the file-backed text page.
  EXPECT_EQ(read(*core, 0x555555554ffc, 8).size(), 8u);
  // Unmapped addresses fail.
  EXPECT_TRUE(read(*core, 0x1000, 8).empty());
  EXPECT_TRUE(read(*core, 0xfffffffffffffffc, 8).empty());
}

TEST(CoreFile, SearchDirsAndSysroot) {
  CoreOptions by_name;
  by_name.sysroot = "/nonexistent-sysroot";  // the recorded paths must not be found as they are
  by_name.search_dirs = {(x86_dir() / "stripped").string()};
  auto core = CoreFile::open((x86_dir() / "intact/core.prog").string(), by_name);
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_EQ(core->mapped_files()[10].resolved, (x86_dir() / "stripped/libfix.so").string());
  // strip keeps the build-id note, so the stripped twin matches the intact core.
  EXPECT_FALSE(has_warning(*core, "build-id mismatch"));

  CoreOptions nowhere;
  nowhere.sysroot = "/nonexistent-sysroot";
  auto lost = CoreFile::open((x86_dir() / "intact/core.prog").string(), nowhere);
  ASSERT_TRUE(lost) << lost.error().to_string();
  EXPECT_TRUE(has_warning(*lost, "not found", "/nonexistent-sysroot/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_EQ(lost->mapped_files()[5].resolved, "");
  EXPECT_TRUE(read(*lost, 0x7ffff7df4000, 8).empty());  // libc text: neither core nor file
}

TEST(CoreFile, BuildIdMismatchNamesBothFiles) {
  // Map the program's path onto the AArch64 fixture folder: its `prog` is another program.
  CoreOptions wrong;
  wrong.path_map = {{kRecordedX86, (a64_dir() / "intact").string()}};
  auto core = CoreFile::open((x86_dir() / "intact/core.prog").string(), wrong);
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_TRUE(has_warning(*core, "build-id mismatch", std::string(kRecordedX86) + "/prog"));
  EXPECT_TRUE(has_warning(*core, "build-id mismatch", (a64_dir() / "intact/prog").string()));
}

TEST(CoreFile, ExecutableOptionNamesTheMainProgram) {
  CoreOptions o;
  o.executable = (x86_dir() / "stripped/prog").string();
  auto core = CoreFile::open((x86_dir() / "intact/core.prog").string(), o);
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_EQ(core->mapped_files()[0].resolved, o.executable);
  EXPECT_EQ(core->mapped_files()[4].resolved, o.executable);
}

TEST(CoreFile, AArch64QemuCoreMatchesGdb) {
  CoreOptions o;
  o.executable = (a64_dir() / "intact/prog").string();
  auto core = CoreFile::open((a64_dir() / "intact/core.prog").string(), o);
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_EQ(core->arch(), Arch::AArch64);
  // `gdb-multiarch -batch -ex 'info threads' -ex 'info registers' prog core.prog` in intact/.
  ASSERT_EQ(core->threads().size(), 1u);
  const CoreThread& t = core->threads()[0];
  EXPECT_EQ(t.tid, 10762);
  EXPECT_EQ(t.signal, 6);
  const std::vector<std::pair<uint16_t, uint64_t>> expected = {
      {0, 0x0},           {1, 0x2a0a},      {2, 0x6},           {3, 0x498000},
      {4, 0x492a00},      {8, 0x83},        {11, 0x5500800cb0}, {17, 0x41cb00},
      {19, 0x2a0a},       {20, 0x48f000},   {22, 0x5500800e68}, {27, 0x4002b8},
      {28, 0x490030},     {29, 0x5500800800}, {30, 0x413b5c},   {31, 0x5500800800},
  };
  for (const auto& [reg, value] : expected) EXPECT_EQ(t.regs.get(reg), value) << "x" << reg;
  EXPECT_EQ(t.regs.pc(), 0x413b70u);
  // qemu writes no NT_FILE: the executable option places the program (static, not PIE).
  ASSERT_FALSE(core->mapped_files().empty());
  EXPECT_EQ(core->mapped_files()[0].start, 0x400000u);
  EXPECT_EQ(core->mapped_files()[0].resolved, o.executable);
  // `gdb-multiarch -batch -ex 'x/2wx $pc' -ex 'x/2gx $sp' prog core.prog`.
  EXPECT_EQ(read(*core, 0x413b70, 4), (std::vector<uint8_t>{0x1f, 0x04, 0x40, 0x31}));
  EXPECT_EQ(read(*core, 0x5500800808, 8),
            (std::vector<uint8_t>{0x0c, 0x55, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00}));
  // `gdb-multiarch -batch -ex 'info auxv' prog core.prog`.
  EXPECT_TRUE(std::find(core->auxv().begin(), core->auxv().end(),
                        std::pair<uint64_t, uint64_t>{9, 0x4005c0}) != core->auxv().end());
}

TEST(CoreFile, NotACore) {
  auto exe = CoreFile::open((x86_dir() / "intact/prog").string());
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.error().field, "e_type");
  auto missing = CoreFile::open("/nonexistent/core");
  EXPECT_FALSE(missing);
  auto garbage = CoreFile::parse(
      std::make_shared<const std::vector<uint8_t>>(std::vector<uint8_t>(4096, 0x41)), "garbage");
  EXPECT_FALSE(garbage);
}

std::shared_ptr<const std::vector<uint8_t>> fixture_core() {
  static const auto image = std::make_shared<const std::vector<uint8_t>>(
      test::read_file(x86_dir() / "intact/core.prog"));
  return image;
}

TEST(CoreFile, TruncatedCoreKeepsWhatIsThere) {
  // Cut in the middle of the PT_LOAD data (notes end at 0x1c7c in `readelf -l core.prog`).
  auto image = fixture_core();
  auto cut = std::make_shared<const std::vector<uint8_t>>(image->begin(), image->begin() + 0x30000);
  auto core = CoreFile::parse(cut, "cut", found_in_fixture());
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_TRUE(has_warning(*core, "core truncated"));
  EXPECT_EQ(core->threads().size(), 1u);
  // The stack segment started at file offset 0x2e000 and is now partly gone.
  EXPECT_EQ(read(*core, 0x7ffffffde000, 8).size(), 8u);
  EXPECT_TRUE(read(*core, 0x7fffffffe8a0, 8).empty());
}

TEST(CoreFile, EveryPrefixIsAnErrorOrACore) {
  auto image = fixture_core();
  for (size_t n = 0; n < 0x2000 && n < image->size(); n += 7) {
    auto cut = std::make_shared<const std::vector<uint8_t>>(image->begin(), image->begin() + n);
    CoreOptions o;
    o.read_mapped_files = false;
    auto core = CoreFile::parse(cut, "cut", o);
    if (core) {
      EXPECT_FALSE(core->threads().empty()) << n;
    }
  }
}

// Overwrites the 32-bit word at `offset` of a copy of the fixture core.
std::shared_ptr<const std::vector<uint8_t>> patched(size_t offset, uint32_t value) {
  auto copy = std::make_shared<std::vector<uint8_t>>(*fixture_core());
  for (size_t i = 0; i < 4; ++i) (*copy)[offset + i] = static_cast<uint8_t>(value >> (8 * i));
  return copy;
}

TEST(CoreFile, CutNotes) {
  // The first note (NT_PRSTATUS) starts at the PT_NOTE offset 0x698: n_namesz, n_descsz, n_type.
  CoreOptions o;
  o.read_mapped_files = false;
  // A prstatus descriptor too short for the registers: the thread is skipped with the reason.
  auto short_prstatus = CoreFile::parse(patched(0x698 + 4, 64), "short", o);
  ASSERT_FALSE(short_prstatus);
  EXPECT_EQ(short_prstatus.error().field, "NT_PRSTATUS")
      << short_prstatus.error().to_string();
  // No NT_PRSTATUS at all (its type renumbered): an error, since nothing can be walked.
  auto no_threads = CoreFile::parse(patched(0x698 + 8, 0x77), "nothreads", o);
  ASSERT_FALSE(no_threads);
  EXPECT_EQ(no_threads.error().field, "NT_PRSTATUS");
}

TEST(CoreFile, BadNtFileIsAWarning) {
  // NT_FILE's descriptor: find it by the count field's known value (20) after its header.
  auto image = fixture_core();
  const std::array<uint8_t, 16> head = {20, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0};
  auto at = std::search(image->begin(), image->end(), head.begin(), head.end());
  ASSERT_NE(at, image->end());
  const size_t offset = static_cast<size_t>(at - image->begin());
  CoreOptions o;
  o.read_mapped_files = false;
  auto core = CoreFile::parse(patched(offset, 0x7fffffff), "bad-count", o);
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_TRUE(has_warning(*core, "NT_FILE count"));
  EXPECT_TRUE(core->mapped_files().empty());
}

}  // namespace
}  // namespace unwindkit::unwind
