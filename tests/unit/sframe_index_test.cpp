// sframe::Index must answer exactly as sframe::lookup on the decoded Section, and fail with
// decode()'s Error: the plugins keep the Index, the CLI and tests the decoded model.
#include <gtest/gtest.h>

#include <vector>

#include "sframe_vectors.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/sframe.h"

namespace {

using namespace unwindkit;

// Every row's first byte and the bytes around every function.
std::vector<uint64_t> probe_pcs(const sframe::Section& s) {
  std::vector<uint64_t> pcs;
  for (const auto& fde : s.fdes) {
    for (const auto& fre : fde.fres) pcs.push_back(fde.func_start + fre.start_offset);
    for (uint64_t pc : {fde.func_start - 1, fde.func_end() - 1, fde.func_end()})
      pcs.push_back(pc);
  }
  return pcs;
}

TEST(SFrameIndex, SameRulesAsTheDecodedSection) {
  for (const auto& v : test::load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto section = sframe::decode(v.content, v.section_base);
    auto index = sframe::Index::build(v.content, v.section_base);
    ASSERT_TRUE(section && index);
    EXPECT_EQ(index->function_count(), section->fdes.size());
    for (uint64_t pc : probe_pcs(*section)) {
      SCOPED_TRACE(pc);
      EXPECT_EQ(index->lookup(pc), sframe::lookup(*section, pc));
    }
  }
}

TEST(SFrameIndex, SameErrorsAsDecode) {
  for (const auto& v : test::load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    for (size_t n = 0; n < v.content.size(); ++n) {
      const Bytes cut(v.content.data(), n);
      auto section = sframe::decode(cut, v.section_base);
      auto index = sframe::Index::build(cut, v.section_base);
      ASSERT_EQ(bool(section), bool(index)) << n;
      if (!section) {
        EXPECT_EQ(index.error(), section.error()) << n;
      }
    }
  }
}

}  // namespace
