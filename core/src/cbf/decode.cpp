#include "unwindkit/cbf/decode.h"

#include <fmt/format.h>

#include <optional>

#include "unwindkit/cbf/constants.h"

namespace unwindkit::cbf {
namespace {

// Reads `n` big-endian bytes; `sign_extend` copies the top bit of the first byte upwards
// (addresses), otherwise the value is zero-extended (counts). More than 8 bytes keep the
// low 64 bits, as Swift's shifting loop does.
Result<uint64_t> read_be(ByteReader& r, unsigned n, bool sign_extend, std::string_view field) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) {
    auto b = r.u8(field);
    if (!b) return tl::unexpected(b.error());
    if (i == 0 && sign_extend && (*b & 0x80) != 0) v = ~uint64_t{0};
    v = (v << 8) | *b;
  }
  return v;
}

class Decoder {
 public:
  Decoder(Bytes data, uint64_t base) : r_(data, Endian::Big, kSectionName, base) {}

  Result<Backtrace> run() {
    const auto info = r_.u8("info");
    if (!info) return tl::unexpected(info.error());
    if ((*info >> kVersionShift) != kVersion)
      return r_.error_at(0, "info.version",
                         fmt::format("version {} (only {} is defined)", *info >> kVersionShift,
                                     kVersion));
    switch (*info & kSizeMask) {
      case kSize16: bt_.word_size = WordSize::Bits16; break;
      case kSize32: bt_.word_size = WordSize::Bits32; break;
      case kSize64: bt_.word_size = WordSize::Bits64; break;
      default: return r_.error_at(0, "info.size", "reserved word size 3");
    }
    while (step()) {
    }
    bt_.encoded_size = r_.pos();
    return std::move(bt_);
  }

 private:
  // Decodes one instruction; false once the record has ended.
  bool step() {
    if (r_.at_end())
      return stop(r_.error("instruction", "data ends without end or trunc").value());
    const size_t at = r_.pos();
    const uint8_t op = *r_.u8("instruction");
    if (op == kOpEnd) return false;
    if (op == kOpTrunc) {
      append(bt_.runs, Frame{FrameKind::Truncated, 0});
      return false;
    }
    const uint8_t kind = op & kAddressKindMask;
    if (kind == kOpPc || kind == kOpRa || kind == kOpAsync) return address(op);
    if ((op & kOmitMask) == kOpOmit) return omit(op);
    if ((op & kRepMask) == kOpRep) return repeat(op, at);
    return stop(
        r_.error_at(at, "instruction", fmt::format("reserved opcode {:#04x}", op)).value());
  }

  bool address(uint8_t op) {
    const unsigned n = (op & kAddressCountMask) + 1u;
    auto v = read_be(r_, n, /*sign_extend=*/true, "address");
    if (!v) return stop(v.error());
    last_address_ = (op & kAbsoluteBit) != 0 ? *v : last_address_ + *v;  // wraps
    const uint8_t kind = op & kAddressKindMask;
    const FrameKind k = kind == kOpPc   ? FrameKind::ProgramCounter
                        : kind == kOpRa ? FrameKind::ReturnAddress
                                        : FrameKind::AsyncResumePoint;
    push(Frame{k, last_address_ & word_mask(bt_.word_size)}, 1);
    return true;
  }

  bool omit(uint8_t op) {
    const unsigned c = (op & kOmitCountMask) + 1u;
    uint64_t count = c;
    if ((op & kOmitExternalBit) != 0) {
      auto v = external_count(c, "omit.count");
      if (!v) return stop(v.error());
      count = *v;
    }
    push(Frame{FrameKind::Omitted, count}, 1);
    return true;
  }

  bool repeat(uint8_t op, size_t at) {
    if (!last_frame_) return stop(r_.error_at(at, "rep", "rep before any frame").value());
    const unsigned c = (op & kRepCountMask) + 1u;
    uint64_t count = c;
    if ((op & kRepExternalBit) != 0) {
      const size_t count_at = r_.pos();
      auto v = external_count(c, "rep.count");
      if (!v) return stop(v.error());
      if (*v > kMaxRepeat)
        return stop(r_.error_at(count_at, "rep.count",
                                fmt::format("{:#x} repeats (at most {:#x})", *v, kMaxRepeat))
                        .value());
      // Swift yields the previous frame once even for a count of 0.
      count = *v == 0 ? 1 : *v;
    }
    push(*last_frame_, count);
    return true;
  }

  Result<uint64_t> external_count(unsigned n, std::string_view field) {
    if (n > kMaxCountBytes)
      return r_.error(field, fmt::format("{} count bytes (at most {})", n, kMaxCountBytes));
    return read_be(r_, n, /*sign_extend=*/false, field);
  }

  void push(const Frame& f, uint64_t count) {
    append(bt_.runs, f, count);
    last_frame_ = f;
  }

  // Ends the frames with the Truncated marker Swift's decoder yields on malformed data.
  bool stop(Error e) {
    bt_.problem = std::move(e);
    append(bt_.runs, Frame{FrameKind::Truncated, 0});
    return false;
  }

  ByteReader r_;
  Backtrace bt_;
  uint64_t last_address_ = 0;
  std::optional<Frame> last_frame_;
};

}  // namespace

Result<Backtrace> decode(Bytes data, uint64_t base) { return Decoder(data, base).run(); }

std::vector<Result<Backtrace>> decode_stream(Bytes data) {
  std::vector<Result<Backtrace>> out;
  size_t pos = 0;
  while (pos < data.size()) {
    out.push_back(decode(data.subspan(pos), pos));
    if (!out.back()) break;
    pos += out.back()->encoded_size;  // at least the info byte, so this always advances
  }
  return out;
}

}  // namespace unwindkit::cbf
