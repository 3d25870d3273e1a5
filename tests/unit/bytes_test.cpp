#include "unwindkit/bytes.h"

#include <gtest/gtest.h>

#include <array>

namespace unwindkit {
namespace {

TEST(ByteReader, ReadsBothByteOrders) {
  const std::array<uint8_t, 4> b{0x12, 0x34, 0x56, 0x78};
  ByteReader le(b, Endian::Little, "t");
  ByteReader be(b, Endian::Big, "t");
  EXPECT_EQ(*le.u32("x"), 0x78563412u);
  EXPECT_EQ(*be.u32("x"), 0x12345678u);
  ByteReader le16(b, Endian::Little, "t");
  EXPECT_EQ(*le16.u16("a"), 0x3412u);
  EXPECT_EQ(*le16.u16("b"), 0x7856u);
  EXPECT_TRUE(le16.at_end());
}

TEST(ByteReader, SignExtends) {
  const std::array<uint8_t, 4> b{0xf0, 0xff, 0x80, 0x7f};
  ByteReader r(b, Endian::Little, "t");
  EXPECT_EQ(*r.i8("a"), -16);
  EXPECT_EQ(*r.i8("b"), -1);
  EXPECT_EQ(*r.sint(2, "c"), 0x7f80);
  ByteReader r2(b, Endian::Little, "t");
  EXPECT_EQ(*r2.sint(4, "d"), static_cast<int32_t>(0x7f80fff0));
  EXPECT_EQ(*r2.sint_at(2, 1, "e"), -128);
}

TEST(ByteReader, ShortReadNamesSectionOffsetAndField) {
  const std::array<uint8_t, 3> b{1, 2, 3};
  ByteReader r(b, Endian::Little, ".sframe", 0x100);
  ASSERT_TRUE(r.u16("first"));
  auto v = r.u32("sfh_num_fdes");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().section, ".sframe");
  EXPECT_EQ(v.error().offset, 0x102u);
  EXPECT_EQ(v.error().field, "sfh_num_fdes");
  EXPECT_EQ(v.error().to_string(), ".sframe+0x102: sfh_num_fdes: needs 4 bytes, 1 left");
  EXPECT_EQ(v.error().kind, ErrorKind::Truncated);
  EXPECT_EQ(r.pos(), 2u);  // a failed read does not move the cursor
}

TEST(ByteReader, ErrorKindsTellShortReadsFromBadValues) {
  const std::array<uint8_t, 4> b{};
  ByteReader r(b, Endian::Little, "t");
  EXPECT_EQ(r.sub(2, 4, "range").error().kind, ErrorKind::Truncated);
  EXPECT_EQ(r.skip(5, "pad").error().kind, ErrorKind::Truncated);
  EXPECT_EQ(r.seek(5, "at").error().kind, ErrorKind::Truncated);
  EXPECT_EQ(r.bytes(5, "blob").error().kind, ErrorKind::Truncated);
  EXPECT_EQ(r.error_at(0, "magic", "bad").value().kind, ErrorKind::BadValue);
  EXPECT_EQ(fail("t", 0, "f", "m").value().kind, ErrorKind::BadValue);
  EXPECT_EQ(fail(ErrorKind::Io, "t", 0, "f", "m").value().kind, ErrorKind::Io);
  EXPECT_EQ(error_kind_name(ErrorKind::UnreadableMemory), "unreadable memory");
}

TEST(ByteReader, SubRangesAreChecked) {
  const std::array<uint8_t, 8> b{};
  ByteReader r(b, Endian::Big, "s");
  EXPECT_TRUE(r.sub(4, 4, "ok"));
  EXPECT_FALSE(r.sub(4, 5, "too long"));
  EXPECT_FALSE(r.sub(9, 0, "past end"));
  EXPECT_FALSE(r.sub(SIZE_MAX, 2, "overflow"));
  auto s = r.sub(6, 2, "x");
  EXPECT_EQ(s->table_offset(), 6u);
  EXPECT_FALSE(r.uint_at(SIZE_MAX - 1, 4, "wrap"));
}

}  // namespace
}  // namespace unwindkit
