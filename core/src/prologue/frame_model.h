// The analyzer's model of one frame while it decodes a function: the CFA's distance from SP
// and FP, and each callee-saved register's state. The per-architecture instruction models
// (x86_64.cpp, aarch64.cpp, s390x.cpp) change it only through these operations, so the rules
// ("a register written before it is saved is lost", "a restore ends the save") exist once.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "unwindkit/arch.h"

namespace unwindkit::prologue::detail {

struct RegState {
  enum class Kind : uint8_t {
    Caller,    // holds the caller's value: nothing here wrote it
    Saved,     // the caller's value is at CFA + slot
    Restored,  // reloaded from CFA + slot, which still holds it (an epilogue)
    Unknown,   // written without a save this model saw
  };
  Kind kind = Kind::Caller;
  int64_t slot = 0;
  bool operator==(const RegState&) const = default;
};

// AArch64 has the most callee-saved registers: x19-x29 and d8-d15.
inline constexpr size_t kMaxCalleeSaved = 19;

struct FrameState {
  std::optional<int64_t> sp;  // CFA - SP, when known
  std::optional<int64_t> fp;  // CFA - FP, while FP points into this frame
  std::array<RegState, kMaxCalleeSaved> regs{};
  bool operator==(const FrameState&) const = default;
};

// What holds on every path of two: what they agree on, the rest unknown.
FrameState meet(const FrameState& a, const FrameState& b);

// What kind of control transfer an instruction is, for the analyzer's block boundaries.
enum class Flow : uint8_t {
  Next,      // falls through
  Call,      // returns here unless the callee does not return
  Terminal,  // ret, unconditional jump, trap: the next instruction starts a new block
  Padding,   // a no-op (alignment between blocks): the flow stays what it was before it
};

// No real frame is larger: offsets beyond it (hostile immediates) make a value unknown,
// and keep every sum of two of them far from overflow.
inline constexpr int64_t kMaxFrame = int64_t{1} << 40;

// a - b, when a is known and both are within kMaxFrame.
inline std::optional<int64_t> minus(std::optional<int64_t> a, int64_t b) {
  if (!a || *a > kMaxFrame || *a < -kMaxFrame || b > kMaxFrame || b < -kMaxFrame)
    return std::nullopt;
  return *a - b;
}

class FrameModel {
 public:
  explicit FrameModel(Arch arch);

  Arch arch() const { return arch_; }
  const FrameState& state() const { return state_; }
  void set_state(const FrameState& s) { state_ = s; }
  std::span<const uint16_t> callee_saved() const { return saved_; }
  // Registers written while they held the caller's value, anywhere so far.
  uint32_t tainted() const { return tainted_; }
  // Registers stored into the very slot this model had them saved in, since the last take
  // (each instruction's): no path that saved one does that (it would overwrite the caller's
  // value with the frame's own), so the code was reached another way than the model assumed.
  uint32_t take_resaved() { return std::exchange(resaved_, 0u); }

  std::optional<int64_t> sp() const { return state_.sp; }
  std::optional<int64_t> fp() const { return state_.fp; }
  // The CFA offset of the word at SP, while SP is known.
  std::optional<int64_t> sp_slot() const { return state_.sp ? minus(0, *state_.sp) : std::nullopt; }
  // The CFA offset of the address base + disp, for base SP or FP while known.
  std::optional<int64_t> cfa_offset(uint16_t base, int64_t disp) const;

  // SP moves by `delta` bytes (negative: the frame grows); unknown stays unknown.
  void move_sp(int64_t delta);
  // SP moves down by `delta` bytes (sub, push): move_sp(-delta) for any delta.
  void grow(int64_t delta) { move_sp(delta < -kMaxFrame ? kMaxFrame + 1 : -delta); }
  void set_sp(std::optional<int64_t> cfa_minus_sp);
  void set_fp(std::optional<int64_t> cfa_minus_fp);

  // `dwarf_reg`'s full value stored at CFA + slot (slot unknown: nullopt).
  void store(uint16_t dwarf_reg, std::optional<int64_t> slot);
  // Something other than a callee-saved register's caller value stored at CFA + slot.
  void store_other(std::optional<int64_t> slot);
  // `dwarf_reg` loaded from CFA + slot (nullopt: from elsewhere).
  void load(uint16_t dwarf_reg, std::optional<int64_t> slot);
  // `dwarf_reg` written by anything else. SP and FP writes the instruction models handle.
  void write(uint16_t dwarf_reg);
  // A call: the callee may overwrite every slot below SP.
  void call();

 private:
  int index(uint16_t dwarf_reg) const;

  Arch arch_;
  std::span<const uint16_t> saved_;
  uint16_t sp_reg_, fp_reg_;
  FrameState state_;
  uint32_t tainted_ = 0;
  uint32_t resaved_ = 0;
};

}  // namespace unwindkit::prologue::detail
