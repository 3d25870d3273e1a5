// Every function's rows with each row's rule named by its index in one table of the section's
// distinct rules. A section has few of them (a 1 M-function module's 2.75 M rows had a handful),
// so a writer that states rows as they are, with no analysis (debuginfo::synthesize's quick
// file), works out each rule and each change between two rules once. The walk is validate()'s
// (validate.cpp): the rows come out of the strict checks' one reading of the section.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/section.h"  // AddressRange

namespace unwindkit::sframe {

struct RuleRow {
  uint32_t start_offset = 0;  // from the function's start (a PCMASK function's: in its block)
  uint32_t rule = 0;          // index in the table visit_rule_rows passes
};

struct FunctionRules {
  size_t index = 0;     // the FDE's, in the section's order
  uint64_t offset = 0;  // of the FDE in the section (where its problems are reported)
  uint64_t start = 0;
  uint32_t size = 0;
  // A PCMASK function's repetition block (its rows repeat every rep_size bytes); 0 for others.
  bool pcmask = false;
  uint32_t rep_size = 0;
  // The section's rows of the function, in its order.
  std::span<const RuleRow> rows;
};

using RuleRowsVisit =
    std::function<void(const FunctionRules&, std::span<const UnwindRule> rules)>;

// validate() of the section, read once on the calling thread, with visit(function, rules) for
// every function whose checks found nothing, in section order. `rules` is the table so far,
// each rule as lookup() lowers the row but with no function bounds (func_start and func_end
// 0); it only grows, and an index keeps its rule. Returns validate()'s problems, the same and
// in its order: with any, the functions visited are not the section's whole and the caller
// must not use them.
std::vector<Error> visit_rule_rows(Bytes bytes, uint64_t section_address,
                                   const std::vector<AddressRange>& text, Format format,
                                   const RuleRowsVisit& visit);

}  // namespace unwindkit::sframe
