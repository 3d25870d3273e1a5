#include "unwindkit/cbf/dump.h"

#include <fmt/format.h>

#include "unwindkit/json_text.h"

namespace unwindkit::cbf {
namespace {

std::string describe(const Frame& f, const Symbolizer& symbolize) {
  std::string text = fmt::format("{:#018x}", f.value);
  if (!symbolize) return text;
  const Place p = symbolize(lookup_address(f));
  if (p.symbol.empty())
    text += " in ??";
  else
    text += fmt::format(" in {}+{} ({})", p.symbol, f.value - p.symbol_start, p.module);
  if (!p.file.empty() && p.line != 0) text += fmt::format(" at {}:{}", p.file, p.line);
  return text;
}

}  // namespace

uint64_t lookup_address(const Frame& f) {
  return f.kind == FrameKind::ReturnAddress && f.value > 0 ? f.value - 1 : f.value;
}

std::string dump_text(const Backtrace& bt, const Symbolizer& symbolize) {
  std::string out = fmt::format("CBF record: {}-bit, {} frames, {} bytes\n",
                                word_bytes(bt.word_size) * 8, frame_count(bt), bt.encoded_size);
  uint64_t index = 0;
  for (const Run& run : bt.runs) {
    const std::string label = run.count == 1 ? fmt::format("#{}", index)
                                             : fmt::format("#{}-#{}", index, index + run.count - 1);
    std::string body;
    if (run.frame.kind == FrameKind::Omitted)
      body = fmt::format("{} frames omitted", run.frame.value);
    else if (run.frame.kind != FrameKind::Truncated)
      body = describe(run.frame, symbolize);
    if (run.count > 1) body += fmt::format(" (x{})", run.count);
    std::string line = fmt::format("{:<8} {:<9} {}", label, kind_name(run.frame.kind), body);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
    index += run.count;
  }
  if (bt.problem) out += "problem: " + bt.problem->to_string() + "\n";
  return out;
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
