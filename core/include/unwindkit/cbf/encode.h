// Encoding CBF with the byte choices of Swift's encoder, so that anything Swift wrote
// re-encodes to the same bytes: the shorter of delta and absolute (delta on a tie), `rep` for
// runs of equal frames (internal count up to 8), omit counts inside the instruction up to 31,
// external counts in as few big-endian bytes as they need, `trunc` last or else `end`.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "unwindkit/cbf/backtrace.h"
#include "unwindkit/error.h"

namespace unwindkit::cbf {

// Fails for what CBF cannot say: an Omitted frame with count 0, or an address wider than
// the word. Frames after a Truncated frame are not written (Swift stops there too).
Result<std::vector<uint8_t>> encode(WordSize word_size, std::span<const Run> runs);

}  // namespace unwindkit::cbf
