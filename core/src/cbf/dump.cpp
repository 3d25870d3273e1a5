#include "unwindkit/cbf/dump.h"

#include <fmt/format.h>

#include "unwindkit/json_text.h"

namespace unwindkit::cbf {
namespace {

std::string frame_text(const Frame& f) {
  switch (f.kind) {
    case FrameKind::Omitted: return fmt::format("omit {}", f.value);
    case FrameKind::Truncated: return "truncated";
    default: return fmt::format("{} {:#x}", kind_name(f.kind), f.value);
  }
}

}  // namespace

std::string dump_text(const Backtrace& bt) {
  std::string s = fmt::format("CBF {}-bit, {} frames, {} bytes\n", word_bytes(bt.word_size) * 8,
                              frame_count(bt), bt.encoded_size);
  uint64_t index = 0;
  for (const Run& r : bt.runs) {
    if (r.count == 1)
      s += fmt::format("#{:<5} {}\n", index, frame_text(r.frame));
    else
      s += fmt::format("#{}-#{} {} (x{})\n", index, index + r.count - 1, frame_text(r.frame),
                       r.count);
    index += r.count;
  }
  return s;
}

std::string dump_json(const Backtrace& bt) {
  std::string s = fmt::format("{{\"word_size\":{},\"frame_count\":{},\"encoded_size\":{},\"frames\":[",
                              word_bytes(bt.word_size) * 8, frame_count(bt), bt.encoded_size);
  for (size_t i = 0; i < bt.runs.size(); ++i) {
    const Frame& f = bt.runs[i].frame;
    s += i == 0 ? "{" : ",{";
    s += fmt::format("\"kind\":\"{}\"", kind_name(f.kind));
    if (f.kind == FrameKind::Omitted)
      s += fmt::format(",\"omitted\":{}", f.value);
    else if (f.kind != FrameKind::Truncated)
      s += fmt::format(",\"address\":\"{:#x}\"", f.value);
    s += fmt::format(",\"repeat\":{}}}", bt.runs[i].count);
  }
  s += "],\"problem\":";
  s += bt.problem ? json_string(bt.problem->to_string()) : "null";
  return s + "}\n";
}

}  // namespace unwindkit::cbf
