// .trace views: the record dump carries the annotations of Intel's llvm-objdump --traceback
// for the same module (LLVM test traceback-dump-complete.s; offsets and the subr2 line per
// notes §3, where the first subr2 line record is -9 and the line is 4).
#include <gtest/gtest.h>

#include <algorithm>

#include "trace_vectors.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/dump.h"

namespace unwindkit::trace {
namespace {

using namespace test;

TEST(TraceDump, RecordsCarryObjdumpInformation) {
  const B b = module199();
  auto s = decode(b, 8);
  ASSERT_TRUE(s);
  const std::string d = dump_records(*s, b);
  EXPECT_EQ(d.rfind(".trace contents:\n", 0), 0u);
  for (const char* want :
       {"00000000: 0a 02 00 00 c7 00 00 00", "# TB_TAG_Module", "00000050: 0c 00 04 00",
        "# TB_TAG_RTN64", "(name: \"main\")", "(line: 6, delta line: 6)",
        "(PC: main+0, delta PC: 0xf)", "(line: 7, delta line: 1)",
        "(PC: main+0xf, delta PC: 0x12)", "(PC: subr1+0xb, delta PC: 0xf)",
        "(PC: subr1+0x1a, delta PC: 0xe)", "(PC: subr1+0x28, delta PC: 0x9)",
        "0000009d: 03 01 00 00 00", "# TB_TAG_File", "(name: \"subr2\")",
        "(line: 4, delta line: -9)", "(PC: subr2+0xb, delta PC: 0x13)", "# TB_TAG_PC4",
        "# TB_TAG_LN1", "# Align", "\"traceback-complete_b.c\""})
    EXPECT_NE(d.find(want), std::string::npos) << want << "\n" << d;
}

TEST(TraceDump, LinesAndJson) {
  const B b = module199();
  auto s = decode(b, 8);
  ASSERT_TRUE(s);
  const std::string lines = dump_lines(*s);
  EXPECT_NE(lines.find("subr2"), std::string::npos);
  EXPECT_NE(lines.find("[0x401070, 0x40107b)"), std::string::npos) << lines;
  const std::string json = dump_json(*s);
  EXPECT_NE(json.find("{\"begin\":\"0x401070\",\"end\":\"0x40107b\",\"line\":4,"
                      "\"file\":\"traceback-complete_b.c\",\"routine\":\"subr2\",\"module\":0}"),
            std::string::npos)
      << json;
}

// A NUL inside a routine name (found by scripts/hostile: GDB's `unwindkit trace dump` raised
// "embedded null character") is written escaped, in every view, never as a raw byte.
TEST(TraceDump, ControlBytesInNamesAreEscaped) {
  B b = module199();
  const std::string main_name = "main";
  auto at = std::search(b.begin(), b.end(), main_name.begin(), main_name.end());
  ASSERT_NE(at, b.end());
  at[1] = 0;  // "m\0in"
  auto s = decode(b, 8);
  ASSERT_TRUE(s);
  for (const std::string& text : {dump_records(*s, b), dump_lines(*s), dump_json(*s)}) {
    EXPECT_EQ(text.find('\0'), std::string::npos) << text;
    EXPECT_NE(text.find("m\\u0000in"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace unwindkit::trace
