// Every function's rows with each row's rule named by its index in one table of the section's
// distinct rules. A section has few of them (a 1 M-function module's 2.75 M rows had a handful),
// so a writer that states rows as they are, with no analysis (debuginfo::synthesize's quick
// file), works out each rule and each change between two rules once.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/constants.h"

namespace unwindkit::sframe {

struct RuleRow {
  uint32_t start_offset = 0;  // from the function's start (a PCMASK function's: in its block)
  uint32_t rule = 0;          // index in the table visit_rule_rows passes
};

struct FunctionRules {
  uint64_t start = 0;
  uint32_t size = 0;
  // A PCMASK function's repetition block (its rows repeat every rep_size bytes); 0 for others.
  bool pcmask = false;
  uint32_t rep_size = 0;
  // The section's rows of the function, in its order, less any that does not interpret
  // (validate() reports those; lookup() finds no rule there).
  std::span<const RuleRow> rows;
};

// visit(function, rules) for every function in section order; `rules` is the table so far, each
// rule as lookup() lowers the row but with no function bounds (func_start and func_end 0). The
// table only grows: an index keeps its rule. The first Error decode() would meet ends the walk.
Result<void> visit_rule_rows(
    Bytes bytes, uint64_t section_address, Format format,
    const std::function<void(const FunctionRules&, std::span<const UnwindRule>)>& visit);

}  // namespace unwindkit::sframe
