#include "unwindkit/cbf/encode.h"

#include <fmt/format.h>

#include <bit>

#include "unwindkit/cbf/constants.h"

namespace unwindkit::cbf {
namespace {

// Bytes needed for `v` as a sign-extended value of a `bits`-wide word (Swift's
// emitNext(address:)): drop leading bytes that only repeat the sign bit.
unsigned signed_length(uint64_t v, unsigned bits) {
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const bool negative = ((v >> (bits - 1)) & 1) != 0;
  const uint64_t magnitude = (negative ? ~v : v) & mask;
  const unsigned leading = static_cast<unsigned>(std::countl_zero(magnitude)) - (64 - bits);
  return bits / 8 - (leading - 1) / 8;
}

// Bytes needed for an unsigned external count (Swift's emitNext(externalCount:)).
unsigned unsigned_length(uint64_t v) {
  return 8 - static_cast<unsigned>(std::countl_zero(v)) / 8;
}

void put_be(std::vector<uint8_t>& out, uint64_t v, unsigned n) {
  for (unsigned i = n; i-- > 0;) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

Result<std::vector<uint8_t>> encode(WordSize word_size, std::span<const Run> runs) {
  const unsigned bits = word_bytes(word_size) * 8;
  const uint64_t mask = word_mask(word_size);
  std::vector<Run> merged;  // equal neighbours become one run, as Swift's encoder sees them
  for (const Run& r : runs) append(merged, r.frame, r.count);

  std::vector<uint8_t> out;
  const uint8_t size_code = word_size == WordSize::Bits16   ? kSize16
                            : word_size == WordSize::Bits32 ? kSize32
                                                            : kSize64;
  out.push_back(static_cast<uint8_t>(kVersion << kVersionShift | size_code));
  uint64_t last = 0;
  for (size_t i = 0; i < merged.size(); ++i) {
    const Frame& f = merged[i].frame;
    switch (f.kind) {
      case FrameKind::Truncated:
        out.push_back(kOpTrunc);
        return out;
      case FrameKind::Omitted:
        if (f.value == 0) return fail("frames", i, "omit", "an omit of 0 frames has no encoding");
        if (f.value <= kMaxInternalOmit) {
          out.push_back(static_cast<uint8_t>(kOpOmit | (f.value - 1)));
        } else {
          const unsigned n = unsigned_length(f.value);
          out.push_back(static_cast<uint8_t>(kOpOmit | kOmitExternalBit | (n - 1)));
          put_be(out, f.value, n);
        }
        break;
      case FrameKind::ProgramCounter:
      case FrameKind::ReturnAddress:
      case FrameKind::AsyncResumePoint: {
        if ((f.value & ~mask) != 0)
          return fail("frames", i, "address",
                      fmt::format("{:#x} does not fit a {}-bit word", f.value, bits));
        const uint64_t delta = (f.value - last) & mask;
        const unsigned abs_len = signed_length(f.value, bits);
        const unsigned delta_len = signed_length(delta, bits);
        const bool absolute = abs_len < delta_len;  // delta on a tie, as Swift
        const unsigned n = absolute ? abs_len : delta_len;
        const uint8_t kind = f.kind == FrameKind::ProgramCounter  ? kOpPc
                             : f.kind == FrameKind::ReturnAddress ? kOpRa
                                                                  : kOpAsync;
        out.push_back(static_cast<uint8_t>(kind | (absolute ? kAbsoluteBit : 0) | (n - 1)));
        put_be(out, absolute ? f.value : delta, n);
        last = f.value;
        break;
      }
    }
    const uint64_t repeats = merged[i].count - 1;
    if (repeats == 0) continue;
    if (repeats <= kMaxInternalRepeat) {
      out.push_back(static_cast<uint8_t>(kOpRep | (repeats - 1)));
    } else {
      const unsigned n = unsigned_length(repeats);
      out.push_back(static_cast<uint8_t>(kOpRep | kRepExternalBit | (n - 1)));
      put_be(out, repeats, n);
    }
  }
  out.push_back(kOpEnd);
  return out;
}

}  // namespace unwindkit::cbf
