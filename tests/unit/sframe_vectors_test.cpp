// Every shared SFrame vector with bytes: our dump of `content` at `section_base` must equal
// the reference objdump text (`groundtruth`) after objdump's file-format lines. New vectors
// in shared/vectors/sframe/ are picked up without touching this file.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sframe_vectors.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/report.h"
#include "unwindkit/sframe/section.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace {

using namespace unwindkit;
using test::load_sframe_vectors;
using Vector = test::SFrameVector;

// objdump starts with "\n<file>:     file format <bfd>\n\n"; the SFrame text follows.
std::string strip_container(const std::string& text) {
  size_t pos = 0;
  for (int line = 0; line < 3; ++line) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return {};
    pos = nl + 1;
  }
  return text.substr(pos);
}

TEST(SFrameVectors, ThereAreVectorsWithBytes) { EXPECT_GE(load_sframe_vectors().size(), 60u); }

TEST(SFrameVectors, DumpEqualsObjdump) {
  for (const Vector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto section = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(section) << section.error().to_string();
    EXPECT_EQ(sframe::dump(*section), strip_container(v.groundtruth));
  }
}

// The dump read straight from the bytes (the CLI's) prints the same text.
TEST(SFrameVectors, DumpFromBytesEqualsObjdump) {
  for (const Vector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    std::string text;
    auto done = sframe::dump(v.content, v.section_base, sframe::Format::SFrame,
                             [&](std::string_view piece) { text.append(piece); });
    ASSERT_TRUE(done) << done.error().to_string();
    EXPECT_EQ(text, strip_container(v.groundtruth));
  }
}

// The JSON document read straight from the bytes (the CLI's) is the one the decoded section
// gives whole (test_sframe_json.py holds it to the reference text): every version, ABI and
// FDE kind the vectors have.
TEST(SFrameVectors, JsonFromBytesIsTheDecodedSectionsDocument) {
  for (const Vector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto section = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(section) << section.error().to_string();
    std::string text;
    auto done = sframe::dump_json(v.name, v.content, v.section_base, sframe::Format::SFrame,
                                  [&](std::string_view piece) { text.append(piece); });
    ASSERT_TRUE(done) << done.error().to_string();
    EXPECT_EQ(text, sframe::dump_json(sframe::FileTable{v.name, &*section, {}, v.content.size()}));
  }
}

// Every vector cut short, and with one byte set to 0xff, at each of a spread of places: where
// decode() refuses the bytes, the dump from the bytes gives the same Error (and prints nothing:
// sframe_dump_test.cpp checks that on a section whose text is many pieces); where decode()
// takes them, both dumps agree.
TEST(SFrameVectors, DumpFromBytesRefusesWhatDecodeRefuses) {
  size_t refused = 0;
  auto compare = [&](Bytes bytes, uint64_t section_base) {
    std::string text;
    auto done = sframe::dump(bytes, section_base, sframe::Format::SFrame,
                             [&](std::string_view piece) { text.append(piece); });
    auto decoded = sframe::decode(bytes, section_base);
    if (!decoded) {
      ++refused;
      ASSERT_FALSE(done);
      EXPECT_EQ(done.error().to_string(), decoded.error().to_string());
      EXPECT_EQ(text, "");
    } else {
      ASSERT_TRUE(done) << done.error().to_string();
      EXPECT_EQ(text, sframe::dump(*decoded));
    }
  };
  for (const Vector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    const size_t step = std::max<size_t>(1, v.content.size() / 23);
    for (size_t at = 0; at < v.content.size(); at += step) {
      SCOPED_TRACE(at);
      compare(Bytes(v.content).first(at), v.section_base);
      std::vector<uint8_t> changed = v.content;
      changed[at] = 0xff;
      compare(changed, v.section_base);
    }
  }
  EXPECT_GT(refused, 0u);
}

// Sections binutils wrote are well-formed: the strict validator finds nothing in them.
TEST(SFrameVectors, ValidatorAcceptsEveryVector) {
  for (const Vector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    const auto problems = sframe::validate(v.content, v.section_base);
    for (const auto& e : problems) ADD_FAILURE() << e.to_string();
  }
}

}  // namespace
