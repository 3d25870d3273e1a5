#include "frame_model.h"

#include <algorithm>

namespace unwindkit::prologue::detail {

using Kind = RegState::Kind;

FrameState meet(const FrameState& a, const FrameState& b) {
  FrameState out = a;
  if (a.sp != b.sp) out.sp.reset();
  if (a.fp != b.fp) out.fp.reset();
  for (size_t i = 0; i < out.regs.size(); ++i)
    if (a.regs[i] != b.regs[i]) out.regs[i] = {Kind::Unknown, 0};
  return out;
}

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
  // disp - (CFA - base)
  const std::optional<int64_t> from = base == sp_reg_ ? state_.sp
                                      : base == fp_reg_ ? state_.fp
                                                        : std::nullopt;
  return from ? minus(disp, *from) : std::nullopt;
}

void FrameModel::move_sp(int64_t delta) {
  if (!state_.sp) return;
  set_sp(minus(state_.sp, delta));
}

void FrameModel::set_sp(std::optional<int64_t> cfa_minus_sp) {
  cfa_minus_sp = minus(cfa_minus_sp, 0);
  state_.sp = cfa_minus_sp;
}

void FrameModel::set_fp(std::optional<int64_t> cfa_minus_fp) {
  state_.fp = minus(cfa_minus_fp, 0);
}

void FrameModel::store(uint16_t dwarf_reg, std::optional<int64_t> slot) {
  const int i = index(dwarf_reg);
  if (i < 0 || !slot) {
    store_other(slot);
    return;
  }
  RegState& r = state_.regs[static_cast<size_t>(i)];
  if (r.kind == Kind::Saved && r.slot == *slot) resaved_ |= 1u << static_cast<unsigned>(i);
  store_other(slot);  // the slot's old content is gone, whatever it held
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
    // The register is the caller's again and the slot still holds it, but compilers' CFI
    // restores the rule anywhere from here to the end of the epilogue (GCC: at once for
    // some registers, after the last load for others; on x86_64 only before a tail call):
    // Restored claims nothing either way (analyzer.cpp).
    r.kind = Kind::Restored;
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
