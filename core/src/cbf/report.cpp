#include "unwindkit/cbf/report.h"

#include <fmt/format.h>

#include "unwindkit/cbf/text.h"

namespace unwindkit::cbf {

DecodeReport decode_report(const std::vector<Result<Backtrace>>& records, uint64_t base,
                           const Symbolizer& symbolize) {
  DecodeReport r;
  uint64_t offset = 0;
  for (const auto& rec : records) {
    if (!rec) {
      r.error = fmt::format("at {:#x}: {} (not a CBF record)", base + offset,
                            rec.error().to_string());
      break;
    }
    if (records.size() > 1) r.text += fmt::format("at {:#x}: ", base + offset);
    r.text += dump_text(*rec, symbolize);
    r.problems |= rec->problem.has_value();
    offset += rec->encoded_size;
  }
  return r;
}

std::string decode_json(const std::vector<Result<Backtrace>>& records) {
  std::string out = "{\"records\":[";
  for (size_t i = 0; i < records.size() && records[i]; ++i) {
    std::string one = dump_json(*records[i]);
    one.pop_back();  // the trailing newline
    out += (i == 0 ? "" : ",") + one;
  }
  return out + "]}\n";
}

uint64_t address_frames(const std::vector<Run>& runs) {
  uint64_t n = 0;
  for (const Run& r : runs)
    if (r.frame.kind != FrameKind::Omitted && r.frame.kind != FrameKind::Truncated) n += r.count;
  return n;
}

std::string encode_text(const std::vector<Run>& runs, WordSize word, std::span<const uint8_t> bytes,
                        const EncodeShown& shown) {
  const uint64_t addresses = address_frames(runs);
  std::string out;
  if (shown.thread) out += fmt::format("thread {}: {} frames\n", *shown.thread, addresses);
  if (!shown.written.empty()) {
    out += "wrote " + shown.written + "\n";
  } else {
    if (shown.hex) out += "hex: " + to_hex(bytes) + "\n";
    if (shown.base64) out += "base64: " + to_base64(bytes) + "\n";
  }
  return out + fmt::format("size: {} bytes (plain: {} bytes)\n", bytes.size(),
                           addresses * word_bytes(word));
}

}  // namespace unwindkit::cbf
