// The SFrame writer against the shared vectors (bytes binutils wrote): re-encoded as v2
// (PCREL clear and set) and v3, every section must pass the strict validator and give the
// same rule as the original at every row start and at every function's last byte. Where a
// vector is v2 or v3 itself, writing it back as the same version and flag at the same address
// must give binutils' bytes exactly (every such vector does, including ld's PLT rows placed
// after the objects' rows): that is the ground truth for the layout choices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sframe_vectors.h"
#include "unwindkit/sframe/encode.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace {

using namespace unwindkit;
using test::load_sframe_vectors;
using test::SFrameVector;

struct Target {
  uint8_t version;
  bool pcrel;
};
constexpr Target kTargets[] = {
    {sframe::kVersion2, false}, {sframe::kVersion2, true}, {sframe::kVersion3, true}};

// What v2 cannot carry: flexible FDEs and the signal bit (v3 only).
bool needs_v3(const sframe::Section& s) {
  for (const auto& fde : s.fdes)
    if (fde.flex(s.header.version) || fde.signal(s.header.version)) return true;
  return false;
}

// Every PC whose rule must survive re-encoding: each row start and each function's last byte.
std::vector<uint64_t> probe_pcs(const sframe::Section& s) {
  std::vector<uint64_t> pcs;
  for (const auto& fde : s.fdes) {
    for (const auto& fre : fde.fres) pcs.push_back(fde.func_start + fre.start_offset);
    if (fde.size != 0) pcs.push_back(fde.func_end() - 1);
  }
  return pcs;
}

void expect_same_rules(const sframe::Section& want, const sframe::Section& got) {
  for (uint64_t pc : probe_pcs(want)) {
    SCOPED_TRACE(::testing::Message() << "pc " << std::hex << pc);
    const auto a = sframe::lookup(want, pc);
    const auto b = sframe::lookup(got, pc);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (a) {
      EXPECT_EQ(*a, *b);
    }
  }
}

void round_trip(const sframe::Section& original, Target t, uint64_t address) {
  SCOPED_TRACE(::testing::Message() << "v" << int{t.version} << (t.pcrel ? " pcrel" : "")
                                    << " at " << std::hex << address);
  const auto bytes = sframe::encode(original, {t.version, t.pcrel, address});
  if (t.version == sframe::kVersion2 && needs_v3(original)) {
    EXPECT_FALSE(bytes) << "v2 cannot carry flex FDEs or signal frames";
    return;
  }
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  for (const auto& e : sframe::validate(*bytes, address)) ADD_FAILURE() << e.to_string();
  const auto again = sframe::decode(*bytes, address);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->header.version, t.version);
  EXPECT_EQ(again->header.pcrel(), t.pcrel);
  ASSERT_EQ(again->fdes.size(), original.fdes.size());
  expect_same_rules(original, *again);
}

TEST(SFrameEncode, EveryVectorKeepsItsRulesInEveryVersion) {
  for (const SFrameVector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    const auto original = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(original) << original.error().to_string();
    for (const Target& t : kTargets) {
      round_trip(*original, t, v.section_base);
      // Elsewhere, as `sframe convert` places it: the function starts must not move.
      round_trip(*original, t, v.section_base + 0x123450);
    }
  }
}

TEST(SFrameEncode, SameVersionAndAddressGivesBinutilsBytes) {
  size_t checked = 0;
  for (const SFrameVector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    const auto original = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(original) << original.error().to_string();
    const auto& h = original->header;
    const auto bytes = sframe::encode(*original, {h.version, h.pcrel(), v.section_base});
    ASSERT_TRUE(bytes) << bytes.error().to_string();
    EXPECT_EQ(*bytes, v.content);
    ++checked;
  }
  EXPECT_GE(checked, 40u);
}

}  // namespace
