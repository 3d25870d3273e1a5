// Decoding CBF: a pure function of the bytes, following Swift's decoder
// (swift/stdlib/public/RuntimeModule/CompactBacktrace.swift) plus the repeat limit.
#pragma once

#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/cbf/backtrace.h"
#include "unwindkit/error.h"

namespace unwindkit::cbf {

// Decodes one record starting at data[0]. Fails (no frames at all) only for a missing or bad
// info byte; every other defect ends the frames with a Truncated frame and sets `problem`.
// `base` is the offset of data[0] in the caller's buffer, for error offsets.
Result<Backtrace> decode(Bytes data, uint64_t base = 0);

// Splits concatenated records (a ring-buffer capture): each record ends after its end/trunc
// instruction, or where its data runs out. Stops at the first bad info byte, returning it
// as the last element.
std::vector<Result<Backtrace>> decode_stream(Bytes data);

}  // namespace unwindkit::cbf
