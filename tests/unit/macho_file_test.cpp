// Mach-O container on hand-built images: a 64-bit thin file with __TEXT (one section) and
// LC_UUID, the same wrapped in a fat header with a 32-bit slice, and truncations.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "unwindkit/macho/macho_file.h"

namespace unwindkit::macho {
namespace {

struct Out {
  std::vector<uint8_t> b;
  bool big = false;
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (big ? 24 - 8 * i : 8 * i)));
  }
  void u64(uint64_t v) {
    u32(static_cast<uint32_t>(v));
    u32(static_cast<uint32_t>(v >> 32));
  }
  void name(const std::string& s) {
    for (size_t i = 0; i < 16; ++i) b.push_back(i < s.size() ? static_cast<uint8_t>(s[i]) : 0);
  }
};

// mach_header_64 (32) + LC_SEGMENT_64 (72 + 80) + LC_UUID (24); section data (8 bytes) at 208.
std::vector<uint8_t> thin64() {
  Out o;
  for (uint32_t v : {0xfeedfacfu, 0x01000007u, 3u, 2u, 2u, 176u, 0u, 0u}) o.u32(v);
  o.u32(0x19);
  o.u32(152);
  o.name("__TEXT");
  o.u64(0x100000000);
  o.u64(0x1000);
  o.u64(0);
  o.u64(216);
  o.u32(5);
  o.u32(5);
  o.u32(1);
  o.u32(0);
  o.name("__unwind_info");
  o.name("__TEXT");
  o.u64(0x1000000d0);
  o.u64(8);
  for (uint32_t v : {208u, 2u, 0u, 0u, 0u, 0u, 0u, 0u}) o.u32(v);
  o.u32(0x1b);
  o.u32(24);
  for (uint8_t i = 0; i < 16; ++i) o.b.push_back(i);
  for (uint8_t i = 0; i < 8; ++i) o.b.push_back(static_cast<uint8_t>(0xa0 + i));
  return o.b;
}

// mach_header (28) for i386 with no load commands.
std::vector<uint8_t> thin32() {
  Out o;
  for (uint32_t v : {0xfeedfaceu, 7u, 3u, 2u, 0u, 0u, 0u}) o.u32(v);
  return o.b;
}

Result<MachOFile> parse(std::vector<uint8_t> b) {
  return MachOFile::parse(std::make_shared<const std::vector<uint8_t>>(std::move(b)));
}

TEST(MachOFile, Thin64) {
  auto f = parse(thin64());
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_FALSE(f->is_fat());
  auto s = f->select("");
  ASSERT_TRUE(s);
  const Slice& sl = **s;
  EXPECT_TRUE(sl.is_64());
  EXPECT_EQ(sl.arch(), Arch::X86_64);
  EXPECT_EQ(sl.image_base(), 0x100000000u);
  ASSERT_TRUE(sl.uuid());
  EXPECT_EQ((*sl.uuid())[15], 15);
  const Section* sec = sl.section("__TEXT", "__unwind_info");
  ASSERT_NE(sec, nullptr);
  ASSERT_EQ(sec->data.size(), 8u);
  EXPECT_EQ(sec->data[0], 0xa0);
  EXPECT_EQ(sl.bytes_at_address(0x1000000d2, 2).size(), 2u);
  EXPECT_TRUE(sl.bytes_at_address(0x1000000d2, 7).empty());
}

TEST(MachOFile, FatSelectsBySliceName) {
  auto a = thin64();
  auto b = thin32();
  Out o;
  o.big = true;
  for (uint32_t v : {0xcafebabeu, 2u}) o.u32(v);
  for (uint32_t v : {0x01000007u, 3u, 64u, static_cast<uint32_t>(a.size()), 0u}) o.u32(v);
  const auto off2 = static_cast<uint32_t>(64 + a.size());
  for (uint32_t v : {7u, 3u, off2, static_cast<uint32_t>(b.size()), 0u}) o.u32(v);
  o.b.resize(64);
  o.b.insert(o.b.end(), a.begin(), a.end());
  o.b.insert(o.b.end(), b.begin(), b.end());
  auto f = parse(o.b);
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_TRUE(f->is_fat());
  ASSERT_EQ(f->slices().size(), 2u);
  EXPECT_FALSE(f->select(""));  // two slices: the caller must choose
  auto i386 = f->select("i386");
  ASSERT_TRUE(i386);
  EXPECT_FALSE((*i386)->is_64());
  EXPECT_EQ((*i386)->arch(), Arch::I386);
  EXPECT_EQ((*f->select("x86_64"))->image_base(), 0x100000000u);
  EXPECT_FALSE(f->select("arm64"));
}

TEST(MachOFile, TruncationsAreErrorsNamingTheField) {
  const auto full = thin64();
  for (size_t n : {size_t{2}, size_t{20}, size_t{100}, size_t{210}}) {
    std::vector<uint8_t> b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto f = parse(b);
    ASSERT_FALSE(f) << n;
    EXPECT_EQ(f.error().section, "Mach-O");
    EXPECT_FALSE(f.error().field.empty());
  }
  auto bad = full;
  bad[0] = 0;
  auto f = parse(bad);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().field, "magic");
}

TEST(MachOFile, LoadCommandSizeMustFit) {
  auto b = thin64();
  b[36] = 0xff;  // LC_SEGMENT_64's cmdsize
  auto f = parse(b);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().field, "load_command.cmdsize");
}

}  // namespace
}  // namespace unwindkit::macho
