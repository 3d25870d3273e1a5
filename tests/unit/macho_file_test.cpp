// Mach-O container on hand-built images: a 64-bit thin file with __TEXT (one section) and
// LC_UUID, the same wrapped in a fat header with a 32-bit slice, and truncations.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/object_section.h"
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

// mach_header (28) for i386 + LC_SEGMENT (56 + 68) named __TEXT at 0x1000 holding one
// __LD,__compact_unwind section at 0x1098: two 20-byte entries (pc, length, encoding,
// personality, lsda; all 32-bit) at file offset 152.
std::vector<uint8_t> thin32_segment() {
  Out o;
  for (uint32_t v : {0xfeedfaceu, 7u, 3u, 2u, 1u, 124u, 0u}) o.u32(v);
  o.u32(0x1);  // LC_SEGMENT
  o.u32(124);
  o.name("__TEXT");
  for (uint32_t v : {0x1000u, 0x1000u, 0u, 192u, 5u, 5u, 1u, 0u}) o.u32(v);
  o.name("__compact_unwind");
  o.name("__LD");
  for (uint32_t v : {0x1098u, 40u, 152u, 2u, 0u, 0u, 0u, 0u, 0u}) o.u32(v);
  for (uint32_t v : {0x1000u, 0x20u, 0x01010005u, 0u, 0u, 0x1020u, 0x10u, 0x02000000u, 0u, 0u})
    o.u32(v);
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

TEST(MachOFile, Thin32SegmentAndTwentyByteCompactUnwindEntries) {
  auto f = parse(thin32_segment());
  ASSERT_TRUE(f) << f.error().to_string();
  const Slice& sl = **f->select("i386");
  EXPECT_FALSE(sl.is_64());
  EXPECT_EQ(sl.arch(), Arch::I386);
  EXPECT_EQ(sl.image_base(), 0x1000u);
  ASSERT_EQ(sl.segments().size(), 1u);
  EXPECT_EQ(sl.segments()[0].vmsize, 0x1000u);
  EXPECT_EQ(sl.segments()[0].filesize, 192u);
  const Section* sec = sl.section("__LD", compact_unwind::kCompactUnwindSection);
  ASSERT_NE(sec, nullptr);
  EXPECT_EQ(sec->addr, 0x1098u);
  EXPECT_EQ(sec->offset, 152u);
  ASSERT_EQ(sec->data.size(), 40u);
  auto entries = compact_unwind::decode_object_section(sl, *sec);
  ASSERT_TRUE(entries) << entries.error().to_string();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[1].offset, compact_unwind::kCompactUnwindEntrySize32);
  EXPECT_EQ((*entries)[1].function, 0x1020u);
  EXPECT_EQ((*entries)[1].length, 0x10u);
  EXPECT_EQ((*entries)[1].encoding, 0x02000000u);
  EXPECT_EQ((*entries)[0].encoding, 0x01010005u);
}

TEST(MachOFile, Thin32TruncationsAndPartialEntries) {
  const auto full = thin32_segment();
  // Inside the header, the LC_SEGMENT, its section, and the section's data.
  for (size_t n : {size_t{20}, size_t{60}, size_t{140}, size_t{170}}) {
    std::vector<uint8_t> b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto f = parse(b);
    ASSERT_FALSE(f) << n;
    EXPECT_EQ(f.error().section, "Mach-O") << n;
  }
  // 30 bytes of __compact_unwind: one whole 20-byte entry and a partial one.
  auto b = full;
  b[28 + 56 + 36] = 30;  // section.size
  auto f = parse(b);
  ASSERT_TRUE(f) << f.error().to_string();
  const Slice& sl = **f->select("");
  auto entries = compact_unwind::decode_object_section(sl, sl.sections()[0]);
  EXPECT_FALSE(entries);
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
