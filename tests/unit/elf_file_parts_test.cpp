// ElfFile::open of a file's parts (Contents::Headers, Contents::NoCode) against the whole
// file read, and against readelf: the same layout and notes, the parts named read whole, the
// rest not there at all.
#include <elf.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "test_support.h"
#include "unwindkit/elf/elf_file.h"

namespace unwindkit::elf {
namespace {

std::string fixture(const std::string& arch, const std::string& name) {
  return (test::shared_dir() / "fixtures" / ("sframe-v2-" + arch) / name).string();
}

std::string readelf_build_id(const std::string& path) {
  static const std::regex re(R"(Build ID: ([0-9a-f]+))");
  std::smatch m;
  const std::string out = test::run_output("readelf -n " + path + " 2>&1");
  return std::regex_search(out, m, re) ? m[1].str() : "";
}

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string out;
  for (uint8_t b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

Bytes data_of(const ElfFile& file, const std::string& name) {
  const Section* s = file.section(name);
  return s ? s->data : Bytes{};
}

void expect_parts_of(const std::string& path) {
  SCOPED_TRACE(path);
  auto whole = ElfFile::open(path);
  auto headers = ElfFile::open(path, ElfFile::Contents::Headers);
  auto no_code = ElfFile::open(path, ElfFile::Contents::NoCode);
  ASSERT_TRUE(whole) << whole.error().to_string();
  ASSERT_TRUE(headers) << headers.error().to_string();
  ASSERT_TRUE(no_code) << no_code.error().to_string();

  const std::string build_id = readelf_build_id(path);
  ASSERT_FALSE(build_id.empty());
  for (const ElfFile* part : {&*headers, &*no_code}) {
    ASSERT_TRUE(part->build_id());
    EXPECT_EQ(hex(*part->build_id()), build_id);
    EXPECT_EQ(part->type(), whole->type());
    EXPECT_EQ(part->entry(), whole->entry());
    EXPECT_EQ(part->segments().size(), whole->segments().size());
    ASSERT_EQ(part->sections().size(), whole->sections().size());
  }

  size_t code = 0, tables = 0;
  for (size_t i = 0; i < whole->sections().size(); ++i) {
    const Section& w = whole->sections()[i];
    const Section& h = headers->sections()[i];
    const Section& n = no_code->sections()[i];
    SCOPED_TRACE(w.name);
    EXPECT_EQ(h.name, w.name);
    EXPECT_EQ(n.name, w.name);
    EXPECT_EQ(n.addr, w.addr);
    EXPECT_EQ(n.offset, w.offset);
    EXPECT_EQ(n.size, w.size);
    const auto same = [](Bytes a, Bytes b) {
      return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
    };
    if (w.flags & SHF_EXECINSTR) {
      ++code;
      EXPECT_TRUE(n.data.empty()) << "code read";
      EXPECT_TRUE(no_code->bytes_at_address(w.addr, 1).empty()) << "code found by address";
    } else {
      ++tables;
      EXPECT_TRUE(same(n.data, w.data)) << "not read whole";
    }
    if (w.type == SHT_NOTE || w.name == ".shstrtab") {
      EXPECT_TRUE(same(h.data, w.data)) << "a note or the section names not read";
    } else {
      EXPECT_TRUE(h.data.empty()) << "read for the headers";
    }
  }
  EXPECT_GT(code, 0u);
  EXPECT_GT(tables, 0u);
  // The part of a segment that is no code is found by address as before.
  const Section* sframe = whole->section(".sframe");
  ASSERT_NE(sframe, nullptr);
  EXPECT_EQ(no_code->bytes_at_address(sframe->addr, 4).size(), 4u);
  EXPECT_FALSE(data_of(*no_code, ".sframe").empty());
}

TEST(ElfFileParts, AProgramsPartsAreItsBytes) {
  expect_parts_of(fixture("x86_64", "stripped/prog"));
}

TEST(ElfFileParts, ALibrarysPartsAreItsBytes) {
  expect_parts_of(fixture("x86_64", "stripped/libfix.so"));
}

TEST(ElfFileParts, AnotherArchitecturesPartsAreItsBytes) {
  expect_parts_of(fixture("aarch64", "stripped/prog"));
}

// A file that is no ELF, or a truncated one, gives the whole read's Error, not a crash.
TEST(ElfFileParts, ABadFileGivesTheWholeReadsError) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("unwindkit-parts-" + std::to_string(::getpid()));
  for (const std::string& content : {std::string("not an ELF file at all"),
                                     std::string("\x7f" "ELF\x02\x01\x01", 7)}) {
    { std::ofstream(path, std::ios::binary) << content; }
    auto whole = ElfFile::open(path.string());
    auto part = ElfFile::open(path.string(), ElfFile::Contents::NoCode);
    ASSERT_FALSE(whole);
    ASSERT_FALSE(part);
    EXPECT_EQ(part.error().to_string(), whole.error().to_string());
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace unwindkit::elf
