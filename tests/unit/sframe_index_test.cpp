// sframe::Index must answer exactly as sframe::lookup on the decoded Section, and fail with
// decode()'s Error: the plugins keep the Index, the CLI and tests the decoded model.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sframe_vectors.h"
#include "unwindkit/sframe/encode.h"
#include "unwindkit/sframe/function_rows.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/row.h"
#include "unwindkit/sframe/sframe.h"

namespace {

using namespace unwindkit;

// Every function's extents, as visit_function_ranges gives them.
Result<std::vector<sframe::AddressRange>> function_ranges(Bytes bytes, uint64_t section_address) {
  std::vector<sframe::AddressRange> out;
  auto visited = sframe::visit_function_ranges(bytes, section_address, sframe::Format::SFrame,
                                               [&](const sframe::AddressRange& fn) {
                                                 out.push_back(fn);
                                                 return true;
                                               });
  if (!visited) return tl::unexpected(visited.error());
  return out;
}

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

// The Index finds functions through a page table whose page size follows how far apart the
// functions lie. Re-encode real sections with their functions moved: packed (many per page),
// spread by gaps from bytes to a gigabyte (pages widen), and a cluster far from the rest.
TEST(SFrameIndex, SameRulesWhereverTheFunctionsLie) {
  const std::vector<std::vector<uint64_t>> gap_patterns = {
      {0}, {1}, {3, 17}, {4096, 0, 5}, {uint64_t{1} << 30, 64},
      {100, 100, 100, uint64_t{1} << 24}};
  size_t sections = 0;
  for (const auto& v : test::load_sframe_vectors()) {
    auto original = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(original);
    if (original->fdes.size() < 3 || !original->header.sorted()) continue;
    for (const auto& gaps : gap_patterns) {
      SCOPED_TRACE(v.name + " gaps " + std::to_string(gaps.front()));
      sframe::Section moved = *original;
      uint64_t at = 0x400000;
      for (size_t i = 0; i < moved.fdes.size(); ++i) {
        moved.fdes[i].func_start = at;
        at += moved.fdes[i].size + gaps[i % gaps.size()];
      }
      auto bytes = sframe::encode(moved, {sframe::kVersion3, false, 0x200000});
      if (!bytes) continue;  // what v3 cannot say (the writer's own tests cover that)
      auto section = sframe::decode(*bytes, 0x200000);
      auto index = sframe::Index::build(*bytes, 0x200000);
      ASSERT_TRUE(section && index);
      ++sections;
      for (uint64_t pc : probe_pcs(*section)) {
        SCOPED_TRACE(pc);
        EXPECT_EQ(index->lookup(pc), sframe::lookup(*section, pc));
      }
      const uint64_t far = at + (uint64_t{1} << 40);
      EXPECT_EQ(index->lookup(far), sframe::lookup(*section, far));
    }
  }
  EXPECT_GT(sections, 10u);
}

// A header that says SORTED over starts that are not (decode() accepts it; validate() reports
// it): the Index must still answer as the decoded model's binary search does.
TEST(SFrameIndex, SameRulesWhenSortedIsUntrue) {
  size_t sections = 0;
  for (const auto& v : test::load_sframe_vectors()) {
    auto original = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(original);
    if (original->fdes.size() < 4 || !original->header.sorted()) continue;
    SCOPED_TRACE(v.name);
    sframe::Section shuffled = *original;
    // In order but for two functions that trade places, one near each end.
    uint64_t at = 0x400000;
    for (auto& fde : shuffled.fdes) {
      fde.func_start = at;
      at += fde.size + 32;
    }
    std::swap(shuffled.fdes[1].func_start, shuffled.fdes[shuffled.fdes.size() - 2].func_start);
    auto bytes = sframe::encode(shuffled, {sframe::kVersion3, false, 0x200000});
    if (!bytes) continue;
    auto section = sframe::decode(*bytes, 0x200000);
    auto index = sframe::Index::build(*bytes, 0x200000);
    ASSERT_TRUE(section && index);
    ASSERT_TRUE(section->header.sorted());
    ++sections;
    for (uint64_t pc : probe_pcs(*section)) {
      SCOPED_TRACE(pc);
      EXPECT_EQ(index->lookup(pc), sframe::lookup(*section, pc));
    }
  }
  EXPECT_GT(sections, 2u);
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

// visit_function_ranges reads the FDE records alone: on every cut of every vector it either gives
// the extents decode() gives for the whole vector (whatever happened to the rows), or fails
// with the Error decode() fails with on that cut; wherever decode() succeeds, it does too;
// and with every row overwritten by 0xff bytes it still gives the functions decode() cannot.
TEST(SFrameFunctionRanges, ReadsTheFunctionRecordsAsDecode) {
  for (const auto& v : test::load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto whole = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(whole);
    for (size_t n = 0; n <= v.content.size(); ++n) {
      const Bytes cut(v.content.data(), n);
      auto section = sframe::decode(cut, v.section_base);
      auto ranges = function_ranges(cut, v.section_base);
      if (section) {
        ASSERT_TRUE(ranges) << n;
      }
      if (!ranges) {
        ASSERT_FALSE(section) << n;
        EXPECT_EQ(ranges.error(), section.error()) << n;
        continue;
      }
      ASSERT_EQ(ranges->size(), whole->fdes.size()) << n;
      for (size_t i = 0; i < ranges->size(); ++i) {
        EXPECT_EQ((*ranges)[i].start, whole->fdes[i].func_start) << n;
        EXPECT_EQ((*ranges)[i].end, whole->fdes[i].func_end()) << n;
      }
    }
    // Rows that cannot be read: decode() fails, the extents are still there.
    std::vector<uint8_t> damaged(v.content.begin(), v.content.end());
    const uint64_t fres = whole->header.fre_subsection();
    std::fill(damaged.begin() + static_cast<std::ptrdiff_t>(fres),
              damaged.begin() + static_cast<std::ptrdiff_t>(fres + whole->header.fre_len), 0xff);
    if (whole->header.num_fres == 0) continue;
    EXPECT_FALSE(sframe::decode(damaged, v.section_base));
    auto ranges = function_ranges(damaged, v.section_base);
    ASSERT_TRUE(ranges) << ranges.error().to_string();
    ASSERT_EQ(ranges->size(), whole->fdes.size());
    for (size_t i = 0; i < ranges->size(); ++i)
      EXPECT_EQ((*ranges)[i].start, whole->fdes[i].func_start);
  }
}

// functions_around stops early only where the header says sorted: with the flag as the
// vector has it and with it cleared, it must answer every probe as a scan over all of
// decode()'s functions does (the function holding the pc, the lowest start above it).
TEST(SFrameFunctionRanges, FunctionsAroundAsAWholeScan) {
  for (const auto& v : test::load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto whole = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(whole);
    std::vector<uint8_t> unflagged(v.content.begin(), v.content.end());
    unflagged[sframe::kOffFlags] &= static_cast<uint8_t>(~sframe::kFlagFdeSorted);
    // The functions in reverse order, flagged unsorted: an early stop would miss the pc's.
    sframe::Section reversed = *whole;
    std::reverse(reversed.fdes.begin(), reversed.fdes.end());
    reversed.header.flags &= static_cast<uint8_t>(~sframe::kFlagFdeSorted);
    std::vector<Bytes> cases{Bytes(v.content), Bytes(unflagged)};
    auto reencoded = sframe::encode(reversed, {.version = sframe::kVersion2, .address = v.section_base});
    if (reencoded && whole->fdes.size() > 1) cases.push_back(Bytes(*reencoded));
    for (const Bytes bytes : cases) {
      for (uint64_t pc : probe_pcs(*whole)) {
        std::optional<sframe::AddressRange> holding;
        std::optional<uint64_t> next;
        for (const auto& fde : whole->fdes) {
          if (!holding && pc >= fde.func_start && pc < fde.func_end())
            holding = sframe::AddressRange{fde.func_start, fde.func_end()};
          if (fde.func_start > pc && (!next || fde.func_start < *next)) next = fde.func_start;
        }
        auto around = sframe::functions_around(bytes, v.section_base, sframe::Format::SFrame, pc);
        ASSERT_TRUE(around) << around.error().to_string();
        EXPECT_EQ(around->holding.has_value(), holding.has_value()) << pc;
        if (holding && around->holding) {
          EXPECT_EQ(around->holding->start, holding->start) << pc;
          EXPECT_EQ(around->holding->end, holding->end) << pc;
        }
        // Once a function holds the pc the scan may end: the next start is then not asked.
        if (!holding) {
          EXPECT_EQ(around->next_start, next) << pc;
        }
      }
    }
  }
}

}  // namespace

namespace {

// function_rows: every row of an FDE, covering the function without gaps, each row's rule
// the one lookup gives inside it; the Index gives the same rows for any pc of the function.
TEST(SFrameIndex, FunctionRowsAreTheLookupRules) {
  for (const auto& v : test::load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto section = sframe::decode(v.content, v.section_base);
    auto index = sframe::Index::build(v.content, v.section_base);
    ASSERT_TRUE(section && index);
    for (size_t i = 0; i < section->fdes.size(); ++i) {
      const auto& fde = section->fdes[i];
      auto rows = sframe::function_rows(*section, i);
      ASSERT_TRUE(rows);
      if (fde.pcmask() || fde.size == 0) continue;
      EXPECT_EQ(rows->size(), fde.fres.size());
      for (const auto& row : *rows) {
        EXPECT_LE(row.start, row.end);
        EXPECT_LE(row.end, fde.func_end());
        if (row.start == row.end) continue;
        auto rule = sframe::lookup(*section, row.start);
        ASSERT_TRUE(rule && *rule);
        // lookup answers for the first function holding the pc; skip overlapped ones.
        if ((*rule)->func_start != fde.func_start) continue;
        EXPECT_EQ(row.rule, **rule);
        EXPECT_EQ(index->function_rows(row.start), sframe::function_rows(*section, i));
      }
    }
  }
}

}  // namespace

namespace {

// The Index's row table against a straightforward scan of the decoded section, on every row
// of every real section: the function is the one whose bytes hold the PC (a scan over all
// functions, no search), the row the last one starting at or before it (a scan over its
// rows); probed at each row's first and last byte and at each function's edges.
TEST(SFrameIndex, RowTableMatchesAScanOnEveryRow) {
  size_t rows = 0;
  for (const auto& v : test::load_sframe_vectors()) {
    SCOPED_TRACE(v.name);
    auto section = sframe::decode(v.content, v.section_base);
    auto index = sframe::Index::build(v.content, v.section_base);
    ASSERT_TRUE(section && index);
    auto scan = [&](uint64_t pc) -> std::optional<std::pair<size_t, size_t>> {
      std::optional<size_t> holder;
      for (size_t i = 0; i < section->fdes.size(); ++i) {
        const auto& fde = section->fdes[i];
        if (pc >= fde.func_start && pc < fde.func_end()) {
          EXPECT_FALSE(holder) << "overlapping functions: the scan cannot decide";
          holder = i;
        }
      }
      if (!holder) return std::nullopt;
      const auto& fde = section->fdes[*holder];
      uint64_t offset = pc - fde.func_start;
      if (fde.pcmask()) {
        if (section->rep_size(fde) == 0) return std::nullopt;
        offset %= section->rep_size(fde);
      }
      std::optional<size_t> row;
      for (size_t j = 0; j < fde.fres.size(); ++j)
        if (fde.fres[j].start_offset <= offset) row = j;
      if (!row) return std::nullopt;
      return std::pair{*holder, *row};
    };
    for (const auto& fde : section->fdes) {
      std::vector<uint64_t> pcs = {fde.func_start - 1, fde.func_start, fde.func_end() - 1,
                                   fde.func_end()};
      for (size_t j = 0; j < fde.fres.size(); ++j) {
        const uint64_t start = fde.func_start + fde.fres[j].start_offset;
        const uint64_t next =
            j + 1 < fde.fres.size() ? fde.func_start + fde.fres[j + 1].start_offset : fde.func_end();
        pcs.push_back(start);
        if (next > start) pcs.push_back(next - 1);
        ++rows;
      }
      for (uint64_t pc : pcs) {
        SCOPED_TRACE(pc);
        const auto want = scan(pc);
        const auto got = index->lookup(pc);
        ASSERT_TRUE(got);
        ASSERT_EQ(want.has_value(), got->has_value());
        if (!want) continue;
        const auto& holder = section->fdes[want->first];
        EXPECT_EQ((*got)->func_start, holder.func_start);
        EXPECT_EQ((*got)->func_end, holder.func_end());
        // The rule of the scanned row: the decoded model's lowering of that row.
        auto row = sframe::interpret(*section, want->first, want->second);
        ASSERT_TRUE(row);
        auto expected = sframe::lookup(*section, pc);
        ASSERT_TRUE(expected && *expected);
        EXPECT_EQ(**got, **expected);
        EXPECT_EQ((*got)->cfa.offset, row->ra_undefined ? 0 : row->cfa.offset);
      }
    }
  }
  EXPECT_GT(rows, 100u);
}

}  // namespace

namespace {

// Functions the row table leaves to the bytes or marks specially: one of more rows than an
// entry can count back (300), one whose first row starts past its first byte, and one of
// no rows. Re-encoded from a real section, probed at every byte against the decoded model.
TEST(SFrameIndex, LongFunctionsAndLateFirstRows) {
  size_t sections = 0;
  for (const auto& v : test::load_sframe_vectors()) {
    auto original = sframe::decode(v.content, v.section_base);
    ASSERT_TRUE(original);
    if (original->fdes.size() < 3 || original->fdes[0].fres.empty() ||
        original->fdes[0].pcmask() || !original->header.sorted())
      continue;
    SCOPED_TRACE(v.name);
    sframe::Section changed = *original;
    sframe::Fde& longest = changed.fdes[0];
    const sframe::Fre row = longest.fres[0];
    longest.fres.clear();
    for (uint32_t k = 0; k < 300; ++k) {
      longest.fres.push_back(row);
      longest.fres.back().start_offset = 2 * k;
    }
    longest.size = 700;
    for (auto& fre : changed.fdes[1].fres) fre.start_offset += 3;
    changed.fdes[1].size += 3;
    changed.fdes[2].fres.clear();
    uint64_t at = 0x400000;
    for (auto& fde : changed.fdes) {
      fde.func_start = at;
      at += fde.size + 8;
    }
    auto bytes = sframe::encode(changed, {sframe::kVersion3, false, 0x200000});
    if (!bytes) continue;
    auto section = sframe::decode(*bytes, 0x200000);
    auto index = sframe::Index::build(*bytes, 0x200000);
    ASSERT_TRUE(section && index);
    ++sections;
    for (uint64_t pc = 0x400000 - 2; pc < at + 2; ++pc) {
      SCOPED_TRACE(pc);
      ASSERT_EQ(index->lookup(pc), sframe::lookup(*section, pc));
    }
  }
  EXPECT_GT(sections, 2u);
}

}  // namespace
