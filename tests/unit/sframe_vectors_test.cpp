// Every shared SFrame vector with bytes: our dump of `content` at `section_base` must equal
// the reference objdump text (`groundtruth`) after objdump's file-format lines. New vectors
// in shared/vectors/sframe/ are picked up without touching this file.
#include <gtest/gtest.h>

#include <string>

#include "sframe_vectors.h"
#include "unwindkit/sframe/dump.h"
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

// Sections binutils wrote are well-formed: the strict validator finds nothing in them.
TEST(SFrameVectors, ValidatorAcceptsEveryVector) {
  for (const Vector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    const auto problems = sframe::validate(v.content, v.section_base);
    for (const auto& e : problems) ADD_FAILURE() << e.to_string();
  }
}

}  // namespace
