#include "unwindkit/compact_unwind/encoding.h"

#include <fmt/format.h>

#include "unwindkit/compact_unwind/constants.h"

namespace unwindkit::compact_unwind {

namespace {

constexpr std::string_view kSection = "encoding";

// Compact register numbers 1..6 to DWARF numbers (index 0 unused).
constexpr std::array<uint16_t, 7> kX86_64Regs = {0,
                                                 reg::x86_64::rbx,
                                                 reg::x86_64::r12,
                                                 reg::x86_64::r13,
                                                 reg::x86_64::r14,
                                                 reg::x86_64::r15,
                                                 reg::x86_64::rbp};
constexpr std::array<uint16_t, 7> kI386Regs = {0,
                                               reg::i386::ebx,
                                               reg::i386::ecx,
                                               reg::i386::edx,
                                               reg::i386::edi,
                                               reg::i386::esi,
                                               reg::i386::ebp};

// arm64 pairs in the order the prologue stores them (X pairs, then D pairs).
struct Arm64Pair {
  uint32_t bit;
  uint16_t first;  // the lower-numbered register, stored at the higher address
};
constexpr std::array<Arm64Pair, 9> kArm64Pairs = {{
    {kArm64PairX19X20, reg::aarch64::x19},
    {kArm64PairX21X22, reg::aarch64::x19 + 2},
    {kArm64PairX23X24, reg::aarch64::x19 + 4},
    {kArm64PairX25X26, reg::aarch64::x19 + 6},
    {kArm64PairX27X28, reg::aarch64::x19 + 8},
    {kArm64PairD8D9, reg::aarch64::d8},
    {kArm64PairD10D11, reg::aarch64::d8 + 2},
    {kArm64PairD12D13, reg::aarch64::d8 + 4},
    {kArm64PairD14D15, reg::aarch64::d8 + 6},
}};

uint32_t field(uint32_t encoding, uint32_t mask, unsigned shift) {
  return (encoding & mask) >> shift;
}

// Saved pairs going down from `top` (CFA offset of the first slot: the higher register of
// the first pair sits just below it).
std::vector<SavedSlot> arm64_pairs(uint32_t encoding, int64_t top) {
  std::vector<SavedSlot> out;
  int64_t at = top;
  for (const auto& p : kArm64Pairs) {
    if ((encoding & p.bit) == 0) continue;
    out.push_back({p.first, at - 8});
    out.push_back({static_cast<uint16_t>(p.first + 1), at - 16});
    at -= 16;
  }
  return out;
}

Result<DecodedEncoding> decode_x86(DecodedEncoding d, bool is_64) {
  const auto& regs = is_64 ? kX86_64Regs : kI386Regs;
  const int64_t w = is_64 ? 8 : 4;
  const uint32_t e = d.encoding;
  switch (d.mode) {
    case kX86ModeBpFrame: {
      d.kind = Kind::FramePointer;
      const uint32_t off = field(e, kX86BpFrameOffset, kX86BpFrameOffsetShift);
      const uint32_t slots = e & kX86BpFrameRegisters;
      // Slot i is at bp - w*off + w*i; bp = CFA - 2w.
      for (unsigned i = 0; i < kX86BpFrameSlots; ++i) {
        const uint32_t r = (slots >> (kX86RegBits * i)) & ((1u << kX86RegBits) - 1);
        if (r == kX86RegNone) continue;
        if (r >= regs.size())
          return fail(kSection, 0, "frame_registers",
                      fmt::format("slot {} names register {} (1..6)", i, r));
        d.saved.push_back({regs[r], -2 * w - w * int64_t{off} + w * int64_t{i}});
      }
      return d;
    }
    case kX86ModeStackImmd:
    case kX86ModeStackInd: {
      const uint32_t size = field(e, kX86FramelessStackSize, kX86FramelessStackSizeShift);
      const uint32_t count = field(e, kX86FramelessRegCount, kX86FramelessRegCountShift);
      auto perm = decode_permutation(count, e & kX86FramelessPermutation);
      if (!perm) return tl::unexpected(perm.error());
      for (size_t i = 0; i < perm->size(); ++i)
        d.saved.push_back({regs[(*perm)[i]], -w - w * int64_t{count} + w * int64_t(i)});
      if (d.mode == kX86ModeStackImmd) {
        d.kind = Kind::FramelessImmediate;
        d.stack_size = size * static_cast<uint32_t>(w);
      } else {
        d.kind = Kind::FramelessIndirect;
        d.stack_immediate_offset = size;
        d.stack_adjust = field(e, kX86FramelessStackAdjust, kX86FramelessStackAdjustShift) *
                         static_cast<uint32_t>(w);
      }
      return d;
    }
    case kX86ModeDwarf:
      d.kind = Kind::Dwarf;
      d.dwarf_offset = e & kX86DwarfSectionOffset;
      return d;
    default:
      return fail(kSection, 0, "mode", fmt::format("unknown {} mode {}", is_64 ? "x86_64" : "i386",
                                                   d.mode));
  }
}

Result<DecodedEncoding> decode_arm64(DecodedEncoding d) {
  const uint32_t e = d.encoding;
  switch (d.mode) {
    case kArm64ModeFrame:
    case kArm64ModeFramePauthLr:
      d.kind = Kind::FramePointer;
      d.ra_mangled = d.mode == kArm64ModeFramePauthLr;
      d.saved = arm64_pairs(e, -16);  // below the fp/lr pair at CFA-16
      return d;
    case kArm64ModeFrameless:
      d.kind = Kind::FramelessImmediate;
      d.stack_size = field(e, kArm64FramelessStackSize, kArm64FramelessStackSizeShift) *
                     kArm64StackUnit;
      d.saved = arm64_pairs(e, 0);
      return d;
    case kArm64ModeDwarf:
      d.kind = Kind::Dwarf;
      d.dwarf_offset = e & kArm64DwarfSectionOffset;
      return d;
    default:
      return fail(kSection, 0, "mode", fmt::format("unknown arm64 mode {}", d.mode));
  }
}

}  // namespace

std::string_view mode_name(Arch arch, uint32_t mode) {
  if (mode == 0) return "NONE";
  if (arch == Arch::AArch64) {
    switch (mode) {
      case kArm64ModeFrameless: return "FRAMELESS";
      case kArm64ModeDwarf: return "DWARF";
      case kArm64ModeFrame: return "FRAME";
      case kArm64ModeFramePauthLr: return "FRAME_PAUTH_LR";
      default: return "UNKNOWN";
    }
  }
  const bool is_64 = arch == Arch::X86_64;
  switch (mode) {
    case kX86ModeBpFrame: return is_64 ? "RBP_FRAME" : "EBP_FRAME";
    case kX86ModeStackImmd: return "STACK_IMMD";
    case kX86ModeStackInd: return "STACK_IND";
    case kX86ModeDwarf: return "DWARF";
    default: return "UNKNOWN";
  }
}

Result<std::vector<uint8_t>> decode_permutation(uint32_t count, uint32_t permutation) {
  if (count > kX86MaxSavedRegs)
    return fail(kSection, 0, "register_count", fmt::format("{} registers (at most 6)", count));
  // Mixed-radix divisors of the Lehmer code for each register count (notes §2).
  static constexpr std::array<std::array<uint32_t, 6>, 7> kRadix = {{
      {},
      {1},
      {5, 1},
      {20, 4, 1},
      {60, 12, 3, 1},
      {120, 24, 6, 2, 1},
      {120, 24, 6, 2, 1, 0},  // the sixth register is whichever one is left
  }};
  std::vector<uint32_t> digits(count);
  uint32_t p = permutation;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t r = kRadix[count][i];
    digits[i] = r == 0 ? 0 : p / r;
    if (r != 0) p %= r;
    if (digits[i] >= kX86MaxSavedRegs - i)
      return fail(kSection, 0, "permutation",
                  fmt::format("{:#x}: digit {} is {}, must be below {}", permutation, i, digits[i],
                              kX86MaxSavedRegs - i));
  }
  if (count == 0 && permutation != 0)
    return fail(kSection, 0, "permutation",
                fmt::format("{:#x} with no saved registers", permutation));
  // Renumber: digit d picks the d-th register among 1..6 not used yet.
  std::array<bool, 7> used{};
  std::vector<uint8_t> regs;
  for (uint32_t d : digits) {
    unsigned seen = 0;
    for (uint8_t r = 1; r <= kX86MaxSavedRegs; ++r) {
      if (used[r]) continue;
      if (seen++ == d) {
        used[r] = true;
        regs.push_back(r);
        break;
      }
    }
  }
  return regs;
}

Result<DecodedEncoding> decode_encoding(Arch arch, uint32_t encoding) {
  DecodedEncoding d;
  d.arch = arch;
  d.encoding = encoding;
  d.mode = field(encoding, kModeMask, kModeShift);
  d.is_not_function_start = (encoding & kIsNotFunctionStart) != 0;
  d.has_lsda = (encoding & kHasLsda) != 0;
  d.personality_index = field(encoding, kPersonalityMask, kPersonalityShift);
  if (d.mode == 0) return d;  // Kind::None
  switch (arch) {
    case Arch::X86_64: return decode_x86(std::move(d), true);
    case Arch::I386: return decode_x86(std::move(d), false);
    case Arch::AArch64: return decode_arm64(std::move(d));
    default:
      return fail(ErrorKind::Unsupported, kSection, 0, "arch",
                  fmt::format("no compact unwind for {}", arch_name(arch)));
  }
}

}  // namespace unwindkit::compact_unwind
