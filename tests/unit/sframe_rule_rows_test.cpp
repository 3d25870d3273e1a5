// visit_rule_rows: validate()'s walk handing out each checked function's rows by rule (the
// quick side file's one reading of a section). Its rows must be the section's as decode() and
// lookup() read them (both held to objdump's text on these vectors), and its problems exactly
// validate()'s, whatever the bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sframe_vectors.h"
#include "unwindkit/sframe/rule_rows.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

namespace {

using namespace unwindkit;
using test::load_sframe_vectors;
using Vector = test::SFrameVector;

struct Visited {
  sframe::FunctionRules function;
  std::vector<sframe::RuleRow> rows;
  std::vector<UnwindRule> rules;  // the table when it was visited
};

std::vector<Visited> visit_all(const std::vector<uint8_t>& bytes, uint64_t base,
                               const std::vector<sframe::AddressRange>& text,
                               std::vector<Error>& problems) {
  std::vector<Visited> out;
  problems = sframe::visit_rule_rows(
      bytes, base, text, sframe::Format::SFrame,
      [&](const sframe::FunctionRules& fn, std::span<const UnwindRule> rules) {
        out.push_back({fn, {fn.rows.begin(), fn.rows.end()}, {rules.begin(), rules.end()}});
      });
  return out;
}

TEST(SFrameRuleRows, EveryRowIsTheRuleLookupGivesThere) {
  for (const Vector& v : load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto section = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(section) << section.error().to_string();
    std::vector<Error> problems;
    const std::vector<Visited> visited = visit_all(v.content, v.section_base, {}, problems);
    for (const Error& e : problems) ADD_FAILURE() << e.to_string();
    ASSERT_EQ(visited.size(), section->fdes.size());
    for (size_t i = 0; i < visited.size(); ++i) {
      const sframe::Fde& fde = section->fdes[i];
      const Visited& fn = visited[i];
      EXPECT_EQ(fn.function.start, fde.func_start);
      EXPECT_EQ(fn.function.size, fde.size);
      EXPECT_EQ(fn.function.pcmask, fde.pcmask());
      ASSERT_EQ(fn.rows.size(), fde.fres.size());
      for (size_t j = 0; j < fn.rows.size(); ++j) {
        EXPECT_EQ(fn.rows[j].start_offset, fde.fres[j].start_offset);
        // An empty function's row (gas writes one) covers no address: lookup() has none.
        if (fn.rows[j].start_offset >= fde.size) continue;
        // A PCMASK function's row offset is inside its block: the first block's is the row.
        auto rule = sframe::lookup(*section, fde.func_start + fn.rows[j].start_offset);
        ASSERT_TRUE(rule && *rule) << "fde " << i << " row " << j;
        UnwindRule expected = **rule;
        expected.func_start = expected.func_end = 0;
        ASSERT_LT(fn.rows[j].rule, fn.rules.size());
        EXPECT_EQ(fn.rules[fn.rows[j].rule], expected) << "fde " << i << " row " << j;
      }
    }
  }
}

// Each byte of a few sections set to values that break different fields: the problems are
// validate()'s, one for one, and with none every function is visited.
TEST(SFrameRuleRows, ProblemsAreValidatesWhateverTheBytes) {
  const std::vector<Vector> vectors = load_sframe_vectors();
  ASSERT_FALSE(vectors.empty());
  size_t broken = 0;
  for (size_t n = 0; n < vectors.size(); n += 7) {
    const Vector& v = vectors[n];
    SCOPED_TRACE(v.name);
    // The text: the functions' extent, which a start or size made larger leaves.
    auto section = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(section);
    uint64_t low = UINT64_MAX, high = 0;
    for (const sframe::Fde& fde : section->fdes) {
      low = std::min(low, fde.func_start);
      high = std::max(high, fde.func_end());
    }
    const std::vector<sframe::AddressRange> text = {{low, high}};
    for (size_t at = 0; at < v.content.size(); ++at) {
      for (uint8_t value : {uint8_t{0x00}, uint8_t{0x7f}, uint8_t{0xff}}) {
        std::vector<uint8_t> bytes = v.content;
        if (bytes[at] == value) continue;
        bytes[at] = value;
        std::vector<Error> problems;
        const std::vector<Visited> visited = visit_all(bytes, v.section_base, text, problems);
        const std::vector<Error> expected = sframe::validate(bytes, v.section_base, text);
        ASSERT_EQ(problems, expected) << "byte " << at << " set to " << int{value};
        if (!expected.empty()) {
          ++broken;
          continue;
        }
        auto read = sframe::decode(bytes, v.section_base);
        ASSERT_TRUE(read) << "byte " << at;
        EXPECT_EQ(visited.size(), read->fdes.size()) << "byte " << at;
      }
    }
  }
  EXPECT_GT(broken, 100u);  // the corruptions did break sections
}

}  // namespace
