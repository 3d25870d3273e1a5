// s390x: stmg/lmg of r6-r15 into the caller's register save area, std/ld of f8-f15,
// aghi/lay on r15, lgr between r11 and r15. Capstone reports no register accesses here, so
// any other instruction is taken to write its first register operand unless it is a store,
// compare, test or branch.
#include <capstone/capstone.h>

#include <string_view>

#include "instructions.h"

namespace unwindkit::prologue::detail {

namespace {

namespace r = reg::s390x;

// The ELF ABI's register save area keeps r15 at 120 bytes above the caller's SP, i.e.
// CFA - 160 + 120: where lmg restores the caller's SP from.
constexpr int64_t kR15Slot = -160 + 120;

std::optional<int64_t> slot_of(const FrameModel& m, const Decoder& d, const cs_sysz_op& op,
                               int64_t extra = 0) {
  if (op.type != SYSZ_OP_MEM || op.mem.index != 0) return std::nullopt;
  const auto base = d.dwarf(op.mem.base);
  if (!base) return std::nullopt;
  return m.cfa_offset(*base, op.mem.disp + extra);
}

// stmg / lmg r_first, r_last, d(b): registers first..last (wrapping past r15) at d(b) + 8k.
bool multiple(FrameModel& m, const Decoder& d, const cs_sysz& z, bool is_store) {
  if (z.op_count != 3 || z.operands[0].type != SYSZ_OP_REG || z.operands[1].type != SYSZ_OP_REG)
    return false;
  const auto first = d.dwarf(z.operands[0].reg);
  const auto last = d.dwarf(z.operands[1].reg);
  if (!first || !last || *first > 15 || *last > 15) return false;
  const unsigned count = (*last - *first + 16u) % 16u + 1u;
  std::optional<int64_t> sp_after = m.sp();
  for (unsigned k = 0; k < count; ++k) {
    const auto reg = static_cast<uint16_t>((*first + k) % 16u);
    const auto slot = slot_of(m, d, z.operands[2], int64_t{8} * k);
    if (is_store) {
      m.store(reg, slot);
    } else if (reg == r::r15) {
      sp_after = slot == kR15Slot ? std::optional<int64_t>(160) : std::nullopt;
    } else {
      m.load(reg, slot);
      if (reg == r::r11) m.set_fp(std::nullopt);
    }
  }
  if (!is_store) m.set_sp(sp_after);
  return true;
}

// Writes the first operand, when it is a register: all but stores, compares, tests, branches.
void write_first(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  const cs_sysz& z = insn.detail->sysz;
  const std::string_view name = insn.mnemonic;
  if (z.op_count == 0 || z.operands[0].type != SYSZ_OP_REG || name.starts_with("st") ||
      name.starts_with("c") || name.starts_with("t") || name.starts_with("b") ||
      name.starts_with("j"))
    return;
  const auto reg = d.dwarf(z.operands[0].reg);
  if (!reg) return;
  if (*reg == r::r15) m.set_sp(std::nullopt);
  if (*reg == r::r11) m.set_fp(std::nullopt);
  m.write(*reg);
}

bool modelled(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  const cs_sysz& z = insn.detail->sysz;
  const cs_sysz_op* op = z.operands;
  const auto reg0 = z.op_count > 0 && op[0].type == SYSZ_OP_REG ? d.dwarf(op[0].reg) : std::nullopt;
  switch (insn.id) {
    case SYSZ_INS_STMG: return multiple(m, d, z, true);
    case SYSZ_INS_LMG: return multiple(m, d, z, false);
    case SYSZ_INS_STD:
    case SYSZ_INS_STG:
      if (z.op_count != 2 || !reg0) return false;
      m.store(*reg0, slot_of(m, d, op[1]));
      return true;
    case SYSZ_INS_LD:
    case SYSZ_INS_LG:
      if (z.op_count != 2 || !reg0 || *reg0 == r::r15) return false;
      m.load(*reg0, slot_of(m, d, op[1]));
      if (*reg0 == r::r11) m.set_fp(std::nullopt);
      return true;
    case SYSZ_INS_AGHI:
    case SYSZ_INS_AGFI:
      if (z.op_count != 2 || reg0 != r::r15 || op[1].type != SYSZ_OP_IMM) return false;
      m.move_sp(op[1].imm);
      return true;
    case SYSZ_INS_LAY:
    case SYSZ_INS_LA: {
      if (z.op_count != 2 || !reg0 || op[1].type != SYSZ_OP_MEM || op[1].mem.index != 0)
        return false;
      const auto base = d.dwarf(op[1].mem.base);
      const std::optional<int64_t> from = base == r::r15   ? m.sp()
                                          : base == r::r11 ? m.fp()
                                                           : std::nullopt;
      const std::optional<int64_t> value = minus(from, op[1].mem.disp);
      if (*reg0 == r::r15) {
        m.set_sp(value);
        return true;
      }
      if (*reg0 == r::r11) {
        m.write(r::r11);
        m.set_fp(value);
        return true;
      }
      return false;
    }
    case SYSZ_INS_LGR: {
      if (z.op_count != 2 || !reg0 || op[1].type != SYSZ_OP_REG) return false;
      const auto src = d.dwarf(op[1].reg);
      if (*reg0 == r::r11 && src == r::r15) {
        m.write(r::r11);
        m.set_fp(m.sp());
        return true;
      }
      if (*reg0 == r::r15 && src == r::r11) {
        m.set_sp(m.fp());
        return true;
      }
      return false;
    }
    default: return false;
  }
}

}  // namespace

Flow apply_s390x(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  switch (insn.id) {
    case SYSZ_INS_BR:
    case SYSZ_INS_J:
    case SYSZ_INS_JG: return Flow::Terminal;
    case SYSZ_INS_BRASL:
    case SYSZ_INS_BASR: m.call(); return Flow::Call;
    default: break;
  }
  if (!modelled(m, d, insn)) write_first(m, d, insn);
  return Flow::Next;
}

}  // namespace unwindkit::prologue::detail
