// The core's reports (sframe/report.h, trace/report.h, cbf/report.h): the text forms
// docs/sframe-json.md, docs/trace-json.md and docs/cbf.md state, which every front end prints.
// The records decoded are notes §4's vectors (Swift's bytes).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/report.h"
#include "unwindkit/file_report.h"
#include "unwindkit/sframe/report.h"
#include "unwindkit/trace/report.h"

namespace unwindkit {
namespace {

TEST(FileReport, OneFileBareSeveralUnderTheirNames) {
  EXPECT_EQ(join_file_texts({{"a", "x\n"}}), "x\n");
  EXPECT_EQ(join_file_texts({{"a", "x\n"}, {"b", "y\n"}}), "a:\nx\n\nb:\ny\n\n");
}

TEST(SframeReport, CheckSaysOkOrCountsProblems) {
  EXPECT_EQ(sframe::check_text("f", {}), "f: .sframe OK\n");
  const Error e{".sframe", 2, "sfp_version", "unsupported version 9"};
  EXPECT_EQ(sframe::check_text("f", {e}), "f: " + e.to_string() + "\nf: 1 problem\n");
  EXPECT_EQ(sframe::check_text("f", {e, e}).substr(2 * (4 + e.to_string().size())),
            "f: 2 problems\n");
}

TEST(SframeReport, LookupShiftsTheRangeAndSaysWhyNothing) {
  UnwindRule r;
  r.func_start = 0x1000;
  r.func_end = 0x1040;
  const Result<std::optional<UnwindRule>> found = std::optional<UnwindRule>(r);
  const std::string text = sframe::lookup_text("f", 0x5010, 0x4000, found);
  EXPECT_EQ(text.rfind("0x5010: f: function [0x5000, 0x5040): ", 0), 0u) << text;
  const Result<std::optional<UnwindRule>> none = std::optional<UnwindRule>();
  EXPECT_EQ(sframe::lookup_text("f", 0x10, 0, none),
            "0x10: f: no SFrame row covers this address\n");
  EXPECT_EQ(no_module_text(0x10), "0x10: in no module\n");
  EXPECT_EQ(no_section_text(0x10, "f", ".sframe"), "0x10: f: no .sframe section\n");
}

TEST(TraceReport, LookupAtRunTimeAddresses) {
  trace::Location l;
  l.routine = "main";
  l.file = "a.c";
  l.line = 7;
  l.begin = 0x1000;
  l.end = 0x1010;
  l.routine_start = 0x1000;
  EXPECT_EQ(trace::lookup_text("f", 0x5004, 0x4000, l),
            "0x5004: main+0x4 a.c:7 [0x5000, 0x5010) in f\n");
  EXPECT_EQ(trace::lookup_text("f", 0x5004, 0x4000, std::nullopt), "0x5004: ?? in f\n");
}

// notes §4's mixed vector: 19 frames in 30 bytes.
const std::vector<uint8_t> kMixed{0x02, 0x11, 0x10, 0x00, 0x20, 0x10, 0x21, 0xff, 0x00, 0x35,
                                  0x7f, 0xff, 0x00, 0x00, 0x10, 0xf0, 0x44, 0x61, 0x03, 0xe8,
                                  0x29, 0x20, 0x20, 0x80, 0x11, 0x10, 0x10, 0x88, 0x09, 0x01};

TEST(CbfReport, RecordsAtTheirAddressesAndTheBadOneAsTheError) {
  std::vector<uint8_t> two = kMixed;
  two.insert(two.end(), kMixed.begin(), kMixed.end());
  two.push_back(0x03);  // word size 3: not a record
  const auto r = cbf::decode_report(cbf::decode_stream(two), 0x1000);
  EXPECT_EQ(r.text.rfind("at 0x1000: CBF record: 64-bit, 19 frames, 30 bytes\n"
                         "#0       pc        0x0000000000001000\n",
                         0),
            0u)
      << r.text;
  EXPECT_NE(r.text.find("\nat 0x101e: CBF record: 64-bit, 19 frames, 30 bytes\n"),
            std::string::npos);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->rfind("at 0x103c: ", 0), 0u) << *r.error;
  EXPECT_FALSE(r.problems);
}

TEST(CbfReport, SymbolizedReturnAddressesAreLookedUpAtTheCall) {
  const auto bt = cbf::decode(kMixed);
  ASSERT_TRUE(bt);
  std::vector<uint64_t> asked;
  const std::string text = cbf::dump_text(*bt, [&](uint64_t a) {
    asked.push_back(a);
    return cbf::Place{"f", 0xf00, "m", "a.c", 3};
  });
  ASSERT_GE(asked.size(), 2u);
  EXPECT_EQ(asked[0], 0x1000u);  // the pc, as it is
  EXPECT_EQ(asked[1], 0x100fu);  // ra 0x1010: the call before it
  EXPECT_NE(text.find("#1       ra        0x0000000000001010 in f+272 (m) at a.c:3\n"),
            std::string::npos) << text;
}

TEST(CbfReport, EncodeCountsAddressFramesOnly) {
  const std::vector<cbf::Run> runs{{{cbf::FrameKind::ProgramCounter, 0x1000}, 1},
                                   {{cbf::FrameKind::Omitted, 5}, 1},
                                   {{cbf::FrameKind::ReturnAddress, 0x2000}, 3}};
  const std::vector<uint8_t> bytes{0x02, 0x11};
  EXPECT_EQ(cbf::encode_text(runs, cbf::WordSize::Bits64, bytes, {7, true, false, {}}),
            "thread 7: 4 frames\nhex: 02 11\nsize: 2 bytes (plain: 32 bytes)\n");
}

}  // namespace
}  // namespace unwindkit
