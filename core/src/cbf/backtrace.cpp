#include "unwindkit/cbf/backtrace.h"

namespace unwindkit::cbf {

unsigned word_bytes(WordSize w) {
  switch (w) {
    case WordSize::Bits16: return 2;
    case WordSize::Bits32: return 4;
    case WordSize::Bits64: return 8;
  }
  return 8;
}

uint64_t word_mask(WordSize w) {
  return w == WordSize::Bits64 ? ~uint64_t{0} : (uint64_t{1} << (word_bytes(w) * 8)) - 1;
}

uint64_t frame_count(const Backtrace& bt) {
  uint64_t n = 0;
  for (const Run& r : bt.runs) n += r.count;
  return n;
}

void append(std::vector<Run>& runs, const Frame& frame, uint64_t count) {
  if (count == 0) return;
  if (!runs.empty() && runs.back().frame == frame)
    runs.back().count += count;
  else
    runs.push_back(Run{frame, count});
}

const char* kind_name(FrameKind k) {
  switch (k) {
    case FrameKind::ProgramCounter: return "pc";
    case FrameKind::ReturnAddress: return "ra";
    case FrameKind::AsyncResumePoint: return "async";
    case FrameKind::Omitted: return "omit";
    case FrameKind::Truncated: return "truncated";
  }
  return "?";
}

}  // namespace unwindkit::cbf
