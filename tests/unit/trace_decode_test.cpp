// .trace decoding, lookup and validation against the vectors of notes §3.
#include <gtest/gtest.h>

#include "trace_vectors.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/lookup.h"

namespace unwindkit::trace {
namespace {

using namespace test;

struct Want {
  const char* routine;
  const char* file;
  int64_t line;
  uint64_t begin, end;
};

TEST(TraceDecode, Module199) {
  const B b = module199();
  ASSERT_EQ(b.size(), 199u);
  auto s = decode(b, 8);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->modules.size(), 1u);
  EXPECT_EQ(s->modules[0].size, 199u);
  EXPECT_EQ(s->modules[0].files, kFiles);
  EXPECT_EQ(s->modules[0].code_size, 0x8eu);
  const Want want[] = {{"main", "traceback-complete_a.c", 6, 0x0, 0xf},
                       {"main", "traceback-complete_a.c", 7, 0xf, 0x21},
                       {"subr1", "traceback-complete_a.c", 10, 0x30, 0x3b},
                       {"subr1", "traceback-complete_a.c", 11, 0x3b, 0x4a},
                       {"subr1", "traceback-complete_a.c", 12, 0x4a, 0x58},
                       {"subr1", "traceback-complete_a.c", 13, 0x58, 0x61},
                       {"subr2", "traceback-complete_b.c", 4, 0x70, 0x7b},
                       {"subr2", "traceback-complete_b.c", 5, 0x7b, 0x8e}};
  ASSERT_EQ(s->rows.size(), std::size(want));
  for (const Want& w : want) {
    for (uint64_t pc : {w.begin, w.end - 1}) {
      auto loc = lookup(*s, kBegin + pc);
      ASSERT_TRUE(loc) << std::hex << pc;
      EXPECT_EQ(loc->routine, w.routine);
      EXPECT_EQ(loc->file, w.file);
      EXPECT_EQ(loc->line, w.line) << std::hex << pc;
      EXPECT_EQ(loc->begin, kBegin + w.begin);
      EXPECT_EQ(loc->end, kBegin + w.end);
    }
  }
  // Gaps between routines and the end of the code map to nothing.
  EXPECT_FALSE(lookup(*s, kBegin + 0x21));
  EXPECT_FALSE(lookup(*s, kBegin + 0x6f));
  EXPECT_FALSE(lookup(*s, kBegin + 0x8e));
  EXPECT_FALSE(lookup(*s, kBegin - 1));
  EXPECT_TRUE(validate(b, 8).empty());
}

TEST(TraceDecode, ShortCorrelations) {
  // bf = line 1 over [0,0x40); then ff 02 = line 3 over [0x40,0x80).
  auto s = decode(bare_module({0xbf, 0xff, 0x02}), 8);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->rows.size(), 2u);
  EXPECT_EQ(s->rows[0].line, 1);
  EXPECT_EQ(s->rows[0].begin, 0u);
  EXPECT_EQ(s->rows[0].end, 0x40u);
  EXPECT_EQ(s->rows[1].line, 3);
  EXPECT_EQ(s->rows[1].begin, 0x40u);
  EXPECT_EQ(s->rows[1].end, 0x80u);
}

TEST(TraceDecode, PcDeltas) {
  // 07 ff = 0x100, 08 ff ff = 0x10000, 09 00 00 01 00 = 0x10001 (stored value + 1).
  const std::pair<B, uint64_t> v[] = {{{0x07, 0xff}, 0x100},
                                      {{0x08, 0xff, 0xff}, 0x10000},
                                      {{0x09, 0x00, 0x00, 0x01, 0x00}, 0x10001}};
  for (const auto& [rec, delta] : v) {
    auto s = decode(bare_module(rec), 8);
    ASSERT_TRUE(s);
    ASSERT_EQ(s->rows.size(), 1u);
    EXPECT_EQ(s->rows[0].end - s->rows[0].begin, delta);
  }
}

TEST(TraceDecode, LineResetsOnlyAtHdr) {
  // Two modules: the second starts again from line 0, PC 0, file 0.
  B two = bare_module({0x05, 0x10, 0x00, 0x07, 0x00});  // LN2 +16, PC1 1
  while (two.size() % 8 != 0) two.push_back(0);
  const B second = bare_module({0x80});  // CO1: line 1 over [0,1)
  two.insert(two.end(), second.begin(), second.end());
  auto s = decode(two, 8);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->modules.size(), 2u);
  ASSERT_EQ(s->rows.size(), 2u);
  EXPECT_EQ(s->rows[0].line, 16);
  EXPECT_EQ(s->rows[1].line, 1);
  EXPECT_EQ(s->rows[1].module, 1u);
  // In one module the line carries across RTN and FIL records: LN4 -3 after line 16.
  B one = header(0, 0x1000, 0x100, {"a.c", "b.c"});
  one.insert(one.end(), {0x05, 0x10, 0x00, 0x07, 0x00});
  one.insert(one.end(), {0x03, 0x01, 0, 0, 0});
  rtn64(one, "f", 0x1080);
  one.insert(one.end(), {0x06, 0xfd, 0xff, 0xff, 0xff, 0x07, 0x0f});
  const uint32_t size = static_cast<uint32_t>(one.size());
  for (unsigned i = 0; i < 4; ++i) one[4 + i] = static_cast<uint8_t>(size >> (8 * i));
  auto t = decode(one, 8);
  ASSERT_TRUE(t) << t.error().to_string();
  auto loc = lookup(*t, 0x1085);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc->line, 13);
  EXPECT_EQ(loc->file, "b.c");
  EXPECT_EQ(loc->routine, "f");
  EXPECT_EQ(loc->begin, 0x1080u);
  EXPECT_EQ(loc->end, 0x1090u);
}

void expect_error(const B& b, uint64_t offset, const std::string& field) {
  auto s = decode(b, 8);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().section, ".trace");
  EXPECT_EQ(s.error().offset, offset) << s.error().to_string();
  EXPECT_EQ(s.error().field, field) << s.error().to_string();
  const auto all = validate(b, 8);
  ASSERT_FALSE(all.empty());
  bool found = false;
  for (const Error& e : all) found |= e.offset == offset && e.field == field;
  EXPECT_TRUE(found) << "validate misses " << field;
}

TEST(TraceDecode, MalformedForms) {
  const size_t hdr = header(0, 0, 0, {}).size();  // 26 bytes
  for (uint8_t tag : {uint8_t{0x01}, uint8_t{0x0b}, uint8_t{0x0d}, uint8_t{0x3f}, uint8_t{0x7f}})
    expect_error(bare_module({0x80, tag}), hdr + 1, "tag");
  expect_error(bare_module({0x03, 0x00, 0x00, 0x00, 0x00}), hdr + 1, "FIL.file_index");
  expect_error(bare_module({0x09, 0x00, 0x00}), hdr + 1, "PC.pc_delta");       // cut by HDR.size
  expect_error(bare_module({0x06, 0x00}), hdr + 1, "LN.line_delta");
  expect_error(bare_module({0xc0}), hdr + 1, "CO2.line_delta");
  expect_error(bare_module({0x0c, 0x00, 0x04, 0x00, 0, 0}), hdr + 4, "RTN.start_pc");
  B big = bare_module({0x80});
  big[4] = 0xff;  // size past the section's end
  expect_error(big, 4, "HDR.size");
  B small = bare_module({0x80});
  small[4] = 4;
  expect_error(small, 4, "HDR.size");
  expect_error(B{0x0a, 0x02, 0x00}, 3, "HDR.minor");  // header cut short
  expect_error(B{0x80}, 0, "tag");                    // records before any HDR
  B version = bare_module({0x80});
  version[1] = 3;
  expect_error(version, 1, "HDR.major");
  B files = header(0, 0, 0, {"a.c"});
  files[16] = 2;  // two files declared, one present
  const uint32_t sz = static_cast<uint32_t>(files.size());
  files[4] = static_cast<uint8_t>(sz);
  expect_error(files, sz, "HDR.file[1]");
}

TEST(TraceValidate, CollectsEveryProblem) {
  // Unknown byte, an out-of-range file, a misaligned RTN and a range outside the code,
  // each reported with its offset; decoding reads on past the unknown byte.
  B b = header(0, 0x1000, 0x10, {"a.c"});  // 31 bytes
  b.push_back(0x0d);                       // 31: unknown
  b.insert(b.end(), {0x03, 0x05, 0, 0, 0});  // 32: file 5 of 1
  b.insert(b.end(), {0x0c, 0x01, 0x01, 0x00, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 'f'});  // 37: RTN64
  b.push_back(0xbf);                       // 50: [0x1000, 0x1040) beyond code end 0x1010
  const uint32_t size = static_cast<uint32_t>(b.size());
  b[4] = static_cast<uint8_t>(size);
  const auto all = validate(b, 8);
  std::vector<std::pair<uint64_t, std::string>> got;
  for (const Error& e : all) got.emplace_back(e.offset, e.field);
  const std::vector<std::pair<uint64_t, std::string>> want{
      {31, "tag"}, {33, "FIL.file_index"}, {37, "RTN64"}, {38, "RTN.pad"}, {50, "range"}};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace unwindkit::trace
