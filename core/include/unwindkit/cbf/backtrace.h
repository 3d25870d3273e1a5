// The decoded model of one CBF record: the machine word size and the frame sequence, kept as
// runs of identical frames so that a `rep` of a million frames costs one entry.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "unwindkit/error.h"

namespace unwindkit::cbf {

enum class WordSize : uint8_t { Bits16, Bits32, Bits64 };

unsigned word_bytes(WordSize w);
// All-ones mask of the word: addresses wrap around at the word size.
uint64_t word_mask(WordSize w);

enum class FrameKind : uint8_t { ProgramCounter, ReturnAddress, AsyncResumePoint, Omitted, Truncated };

struct Frame {
  FrameKind kind = FrameKind::ProgramCounter;
  uint64_t value = 0;  // the address, or for Omitted the number of frames left out
  bool operator==(const Frame&) const = default;
};

struct Run {
  Frame frame;
  uint64_t count = 1;  // consecutive copies of `frame`
  bool operator==(const Run&) const = default;
};

struct Backtrace {
  WordSize word_size = WordSize::Bits64;
  std::vector<Run> runs;
  size_t encoded_size = 0;  // bytes of the record, info byte to end/trunc inclusive
  // Why the decoder stopped with a Truncated frame it did not read from a `trunc`
  // instruction (reserved opcode, cut address, data ran out, ...): section, offset, field.
  std::optional<Error> problem;
};

uint64_t frame_count(const Backtrace& bt);
// Appends a frame, merging it into the last run when equal.
void append(std::vector<Run>& runs, const Frame& frame, uint64_t count = 1);
const char* kind_name(FrameKind k);  // "pc", "ra", "async", "omit", "truncated"

}  // namespace unwindkit::cbf
