// Every row of one SFrame function, lowered to the rule model with the range each covers:
// what the prologue analyzer checks its frame model against. (Index::function_rows gives
// the same from the bytes, for the function holding a PC.)
#pragma once

#include <cstddef>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/prologue/analyzer.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

// FDE `fde_index`'s rows in table order. Empty for a PCMASK function (PLT stubs: rows that
// repeat), whose ranges are not one function's.
Result<std::vector<prologue::TableRow>> function_rows(const Section& section, size_t fde_index);

}  // namespace unwindkit::sframe
