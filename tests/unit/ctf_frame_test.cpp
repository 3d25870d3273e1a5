// CTF Frame (specs/ctf-frame-v1-header-patch.txt): sections laid out here from the patch's
// text (27-byte header without auxhdr_len, FRE types 1/2/3; function starts relative to the
// section as in linked v1, formats.md), each the twin of an SFrame v1 section from sframe_builder.h. The twin must decode,
// dump and look up as the v1 section does; each corruption class must name .ctf_frame, the
// byte offset (worked out by hand from the patch's layout) and the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sframe_builder.h"
#include "unwindkit/bytes.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace {

using namespace unwindkit;
using test::FdeSpec;
using test::fre_info;
using test::SectionSpec;

constexpr uint64_t kAddress = 0x2000;  // where both twins live
constexpr size_t kCtfHeader = 27, kFde = 17;

// v1 AMD64, two functions (starts relative to the section, as binutils 2.40 links them).
// CTF layout: FDE 0 at 27, FDE 1 at 44, FRE sub-section at 61: f0 rows at 61 (3 bytes),
// 64 (4 bytes), 68 (4 bytes); f1 row at 72 (4 bytes: 2-byte start); the section ends at 76.
SectionSpec v1_spec() {
  SectionSpec spec;
  spec.version = 1;
  spec.fdes = {
      FdeSpec{-0x1000, 0x20, 0, 0, 0,
              {{0, fre_info(true, 1), {8}},
               {1, fre_info(true, 2), {16, -16}},
               {4, fre_info(false, 2), {16, -16}}}},
      FdeSpec{-0xfc0, 0x10, 1, 0, 0, {{0, fre_info(true, 1), {8}}}},
  };
  return spec;
}

// The patch's layout, little-endian: ctf_frame_header, ctf_frame_func_desc_entry[], FREs.
std::vector<uint8_t> build_ctf(const SectionSpec& v1) {
  test::ByteWriter fres(Endian::Little);
  std::vector<uint32_t> offs;
  uint32_t count = 0;
  for (const FdeSpec& f : v1.fdes) {
    offs.push_back(static_cast<uint32_t>(fres.out.size()));
    count += static_cast<uint32_t>(f.fres.size());
    for (const auto& r : f.fres) {
      fres.put(r.start, size_t{1} << (f.info & 0xf));  // v1 type t: 1 << t bytes
      fres.put(r.info, 1);
      for (int32_t w : r.words) fres.put(static_cast<uint32_t>(w), size_t{1} << ((r.info >> 5) & 3));
    }
  }
  test::ByteWriter b(Endian::Little);
  b.put(0xdee2, 2);  // CTF_FRAME_MAGIC
  b.put(1, 1);       // CTF_FRAME_VERSION_1
  b.put(v1.flags, 1);
  b.put(v1.abi, 1);
  b.put(static_cast<uint8_t>(v1.fixed_fp), 1);
  b.put(static_cast<uint8_t>(v1.fixed_ra), 1);
  b.put(v1.fdes.size(), 4);  // cth_num_fdes
  b.put(count, 4);
  b.put(fres.out.size(), 4);
  b.put(0, 4);
  b.put(v1.fdes.size() * kFde, 4);
  EXPECT_EQ(b.out.size(), kCtfHeader);
  for (size_t i = 0; i < v1.fdes.size(); ++i) {
    const FdeSpec& f = v1.fdes[i];
    b.put(static_cast<uint64_t>(f.start), 4);  // relative to the section
    b.put(f.size, 4);
    b.put(offs[i], 4);
    b.put(f.fres.size(), 4);
    // CTF_FRAME_V1_FUNC_INFO(fde_type, fre_type): FRE types 1/2/3 for v1's 0/1/2.
    b.put((f.info & 0x10) | ((f.info & 0xf) + 1), 1);
  }
  b.out.insert(b.out.end(), fres.out.begin(), fres.out.end());
  return b.out;
}

bool has(const std::vector<Error>& problems, uint64_t offset, const std::string& field) {
  return std::any_of(problems.begin(), problems.end(), [&](const Error& e) {
    return e.section == ".ctf_frame" && e.offset == offset && e.field == field;
  });
}

std::string all(const std::vector<Error>& problems) {
  std::string out;
  for (const auto& e : problems) out += e.to_string() + "\n";
  return out;
}

std::vector<Error> check(const std::vector<uint8_t>& bytes) {
  return sframe::validate(bytes, kAddress, {}, sframe::Format::CtfFrame);
}

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

TEST(CtfFrame, TwinDecodesDumpsAndLooksUpAsV1) {
  const auto v1 = test::build_sframe(v1_spec());
  const auto ctf = build_ctf(v1_spec());
  ASSERT_EQ(ctf.size(), 76u);
  EXPECT_TRUE(check(ctf).empty()) << all(check(ctf));
  auto a = sframe::decode(v1, kAddress);
  auto b = sframe::decode(ctf, kAddress, sframe::Format::CtfFrame);
  ASSERT_TRUE(a) << a.error().to_string();
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_EQ(b->header.format, sframe::Format::CtfFrame);
  ASSERT_EQ(b->fdes.size(), 2u);
  EXPECT_EQ(b->fdes[0].func_start, 0x1000u);
  EXPECT_EQ(b->fdes[1].func_start, 0x1040u);
  auto index = sframe::Index::build(ctf, kAddress, sframe::Format::CtfFrame);
  ASSERT_TRUE(index) << index.error().to_string();
  for (uint64_t pc = 0xff0; pc < 0x1060; ++pc) {
    auto want = sframe::lookup(*a, pc);
    auto got = sframe::lookup(*b, pc);
    auto indexed = index->lookup(pc);
    ASSERT_TRUE(want && got && indexed);
    EXPECT_EQ(*got, *want) << std::hex << pc;
    EXPECT_EQ(*indexed, *want) << std::hex << pc;
  }
  std::string dump = sframe::dump(*b);
  const std::string title = "Contents of the CTF Frame section .ctf_frame:";
  ASSERT_EQ(dump.rfind(title, 0), 0u) << dump;
  dump.replace(0, title.size(), "Contents of the SFrame section .sframe:");
  for (size_t at; (at = dump.find("CTF_FRAME_")) != std::string::npos;)
    dump.replace(at, 10, "SFRAME_");
  EXPECT_EQ(dump, sframe::dump(*a));
}

TEST(CtfFrame, DetectedFromTheBytes) {
  EXPECT_EQ(sframe::detect_format(build_ctf(v1_spec())), sframe::Format::CtfFrame);
  EXPECT_EQ(sframe::detect_format(test::build_sframe(v1_spec())), sframe::Format::SFrame);
  auto v2 = v1_spec();
  v2.version = 2;
  EXPECT_EQ(sframe::detect_format(test::build_sframe(v2)), sframe::Format::SFrame);
}

// Each corruption class: the problem names .ctf_frame, the byte and the CTF header's field.
TEST(CtfFrame, BadMagic) {
  auto b = build_ctf(v1_spec());
  b[0] = 0x12;
  const auto p = check(b);
  EXPECT_TRUE(has(p, 0, "ctfp_magic")) << all(p);
  auto d = sframe::decode(b, kAddress, sframe::Format::CtfFrame);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().section, ".ctf_frame");
  EXPECT_EQ(d.error().field, "ctfp_magic");
}

TEST(CtfFrame, VersionTwoIsUnknown) {
  auto b = build_ctf(v1_spec());
  b[2] = 2;
  const auto p = check(b);
  EXPECT_TRUE(has(p, 2, "ctfp_version")) << all(p);
  auto d = sframe::decode(b, kAddress, sframe::Format::CtfFrame);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().offset, 2u);
  EXPECT_EQ(d.error().kind, ErrorKind::Unsupported);
}

TEST(CtfFrame, S390xIsNoCtfFrameAbi) {
  auto b = build_ctf(v1_spec());
  b[4] = 4;
  const auto p = check(b);
  EXPECT_TRUE(has(p, 4, "cth_frame_abi_arch")) << all(p);
}

TEST(CtfFrame, FreTypeZeroAndFourAreUnknown) {
  for (uint8_t type : {uint8_t{0}, uint8_t{4}}) {
    auto b = build_ctf(v1_spec());
    const size_t info = kCtfHeader + 16;  // FDE 0's ctf_func_info
    b[info] = static_cast<uint8_t>((b[info] & 0xf0) | type);
    const auto p = check(b);
    EXPECT_TRUE(has(p, info, "fde[0].info")) << all(p);
    auto d = sframe::decode(b, kAddress, sframe::Format::CtfFrame);
    ASSERT_FALSE(d) << int{type};
    EXPECT_EQ(d.error().section, ".ctf_frame");
    EXPECT_EQ(d.error().offset, info);
    EXPECT_EQ(d.error().field, "fde[0].info");
    auto index = sframe::Index::build(b, kAddress, sframe::Format::CtfFrame);
    ASSERT_FALSE(index);
    EXPECT_EQ(index.error(), d.error());
  }
}

TEST(CtfFrame, UnusedInfoBits) {
  auto b = build_ctf(v1_spec());
  b[kCtfHeader + 16] |= 0x20;  // SFrame's PAuth key bit: unused in CTF Frame
  b[61 + 1] |= 0x80;           // FDE 0 row 0's fre_info: SFrame's mangled-RA bit
  const auto p = check(b);
  EXPECT_TRUE(has(p, kCtfHeader + 16, "fde[0].info")) << all(p);
  EXPECT_TRUE(has(p, 62, "fde[0].fre[0].info")) << all(p);
}

TEST(CtfFrame, OffsetsPastTheEnd) {
  {
    auto b = build_ctf(v1_spec());
    put32(b, 19, 0x1000);  // cth_fdeoff
    EXPECT_TRUE(has(check(b), 19, "cth_fdeoff")) << all(check(b));
  }
  {
    auto b = build_ctf(v1_spec());
    put32(b, 23, 0x1000);  // cth_freoff
    EXPECT_TRUE(has(check(b), 23, "cth_freoff")) << all(check(b));
  }
  {
    auto b = build_ctf(v1_spec());
    put32(b, 15, 0x1000);  // cth_fre_len
    EXPECT_TRUE(has(check(b), 15, "cth_fre_len")) << all(check(b));
    auto d = sframe::decode(b, kAddress, sframe::Format::CtfFrame);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().offset, 15u);
    EXPECT_EQ(d.error().field, "cth_fre_len");
  }
  {
    auto b = build_ctf(v1_spec());
    put32(b, 7, 9);  // cth_num_fdes
    EXPECT_TRUE(has(check(b), 7, "cth_num_fdes")) << all(check(b));
  }
  {
    auto b = build_ctf(v1_spec());
    put32(b, 11, 5);  // cth_num_fres: the FDEs hold 4
    EXPECT_TRUE(has(check(b), 11, "cth_num_fres")) << all(check(b));
  }
  {
    auto b = build_ctf(v1_spec());
    put32(b, kCtfHeader + kFde + 8, 0x100);  // FDE 1's ctf_func_start_fre_off
    const auto p = check(b);
    EXPECT_TRUE(std::any_of(p.begin(), p.end(),
                            [](const Error& e) {
                              return e.section == ".ctf_frame" && e.field == "fde[1].fre[0].start";
                            }))
        << all(p);
  }
}

TEST(CtfFrame, Truncations) {
  const auto whole = build_ctf(v1_spec());
  // In the header: the first field short of bytes.
  EXPECT_TRUE(has(check({whole.begin(), whole.begin() + 10}), 7, "cth_num_fdes"));
  EXPECT_TRUE(has(check({whole.begin(), whole.begin() + 25}), 23, "cth_freoff"));
  // Past the header: the sub-sections no longer fit.
  const auto fdes = check({whole.begin(), whole.begin() + 40});
  EXPECT_TRUE(has(fdes, 7, "cth_num_fdes")) << all(fdes);
  const auto fres = check({whole.begin(), whole.end() - 1});
  EXPECT_TRUE(has(fres, 15, "cth_fre_len")) << all(fres);
  for (size_t n = 0; n < whole.size(); ++n) {
    const std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<long>(n));
    auto d = sframe::decode(cut, kAddress, sframe::Format::CtfFrame);
    ASSERT_FALSE(d) << n;
    EXPECT_EQ(d.error().section, ".ctf_frame");
    EXPECT_LE(d.error().offset, n);
    EXPECT_FALSE(check(cut).empty()) << n;
  }
}

}  // namespace
