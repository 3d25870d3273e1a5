#include "frame_model.h"

#include <algorithm>

namespace unwindkit::prologue::detail {

using Kind = RegState::Kind;

FrameModel::FrameModel(Arch arch)
    : arch_(arch),
      saved_(callee_saved_registers(arch).first(
          std::min(callee_saved_registers(arch).size(), kMaxCalleeSaved))),
      sp_reg_(arch_info(arch).sp),
      fp_reg_(arch_info(arch).fp) {
  // At the entry SP is the CFA less what the call left there: x86_64's return address;
  // s390x's CFA lies 160 bytes above SP (the register save area).
  const ArchInfo& info = arch_info(arch);
  state_.sp = -info.sp_from_cfa + (info.ra_in_register ? 0 : int64_t{info.word_size});
}

int FrameModel::index(uint16_t dwarf_reg) const {
  for (size_t i = 0; i < saved_.size(); ++i)
    if (saved_[i] == dwarf_reg) return static_cast<int>(i);
  return -1;
}

std::optional<int64_t> FrameModel::cfa_offset(uint16_t base, int64_t disp) const {
  if (base == sp_reg_ && state_.sp) return disp - *state_.sp;
  if (base == fp_reg_ && state_.fp) return disp - *state_.fp;
  return std::nullopt;
}

void FrameModel::move_sp(int64_t delta) {
  if (!state_.sp) return;
  // Hostile immediates: a frame beyond 2^40 bytes is no frame.
  if (delta > (int64_t{1} << 40) || delta < -(int64_t{1} << 40)) {
    state_.sp.reset();
    return;
  }
  if (delta > 0) epilogue_ = true;
  set_sp(*state_.sp - delta);
}

void FrameModel::set_sp(std::optional<int64_t> cfa_minus_sp) {
  if (cfa_minus_sp && (*cfa_minus_sp > (int64_t{1} << 40) || *cfa_minus_sp < -(int64_t{1} << 40)))
    cfa_minus_sp.reset();
  if (cfa_minus_sp && state_.sp && *cfa_minus_sp < *state_.sp) epilogue_ = true;
  state_.sp = cfa_minus_sp;
}

void FrameModel::set_fp(std::optional<int64_t> cfa_minus_fp) {
  if (cfa_minus_fp && (*cfa_minus_fp > (int64_t{1} << 40) || *cfa_minus_fp < -(int64_t{1} << 40)))
    cfa_minus_fp.reset();
  state_.fp = cfa_minus_fp;
}

void FrameModel::store(uint16_t dwarf_reg, std::optional<int64_t> slot) {
  const int i = index(dwarf_reg);
  if (i < 0 || !slot) {
    store_other(slot);
    return;
  }
  store_other(slot);  // the slot's old content is gone, whatever it held
  RegState& r = state_.regs[static_cast<size_t>(i)];
  // The first save of the caller's value counts; later stores of a value the frame has
  // changed since do not.
  if (r.kind == Kind::Caller || r.kind == Kind::Restored) r = {Kind::Saved, *slot};
}

void FrameModel::store_other(std::optional<int64_t> slot) {
  if (!slot) return;
  for (size_t i = 0; i < saved_.size(); ++i) {
    RegState& r = state_.regs[i];
    if ((r.kind == Kind::Saved || r.kind == Kind::Restored) && r.slot == *slot) {
      if (r.kind == Kind::Saved) tainted_ |= 1u << i;
      r.kind = Kind::Unknown;
    }
  }
}

void FrameModel::load(uint16_t dwarf_reg, std::optional<int64_t> slot) {
  const int i = index(dwarf_reg);
  if (i < 0) return;
  RegState& r = state_.regs[static_cast<size_t>(i)];
  if (r.kind == Kind::Saved && slot && *slot == r.slot) {
    epilogue_ = true;
    // GCC's x86_64 epilogues restore without .cfi_restore: the CFI keeps naming the slot,
    // which still holds the value, so the claim stays. Elsewhere the CFI restores the rule.
    if (arch_ == Arch::X86_64)
      r.kind = Kind::Restored;
    else
      r = {};
    return;
  }
  write(dwarf_reg);
}

void FrameModel::write(uint16_t dwarf_reg) {
  const int i = index(dwarf_reg);
  if (i < 0) return;
  RegState& r = state_.regs[static_cast<size_t>(i)];
  if (r.kind == Kind::Caller) {
    r.kind = Kind::Unknown;
    tainted_ |= 1u << static_cast<unsigned>(i);
  }
}

void FrameModel::call() {
  for (RegState& r : state_.regs)
    if (r.kind == Kind::Restored && (!state_.sp || -r.slot > *state_.sp)) r.kind = Kind::Unknown;
}

}  // namespace unwindkit::prologue::detail
