// AArch64: stp/str/stur of x19-x29 and d8-d15 (pre-index, post-index, offset; sp- or
// x29-based), their ldp/ldr restores, sp and x29 arithmetic.
#include <capstone/capstone.h>

#include <string_view>

#include "instructions.h"

namespace unwindkit::prologue::detail {

namespace {

namespace r = reg::aarch64;

// Bytes a register occupies in memory, from its name's first letter (x19: 8, q8: 16).
int64_t width(const Decoder& d, unsigned capstone_reg) {
  const char* name = cs_reg_name(d.handle(), capstone_reg);
  switch (name ? name[0] : 0) {
    case 'q':
    case 'v': return 16;
    case 'w':
    case 's': return 4;
    case 'h': return 2;
    case 'b': return 1;
    default: return 8;
  }
}

int64_t shifted(const cs_arm64_op& op) {
  // Immediates here are 12 bits, shifted by at most 12 (a hostile value is caught by minus()).
  if (op.shift.type != ARM64_SFT_LSL) return op.imm;
  if (op.shift.value >= 32 || op.imm < 0 || op.imm > kMaxFrame) return kMaxFrame + 1;
  return op.imm << op.shift.value;
}

// A store or load of one or two registers: the registers before the memory operand, an
// immediate after it for post-index. Only SP- and FP-based addresses are followed.
bool transfer(FrameModel& m, const Decoder& d, const cs_insn& insn, bool is_store) {
  const cs_arm64& a = insn.detail->arm64;
  int mem = -1;
  for (int i = 0; i < a.op_count; ++i)
    if (a.operands[i].type == ARM64_OP_MEM) mem = i;
  if (mem < 1 || a.operands[mem].mem.index != ARM64_REG_INVALID) return false;
  const auto base = d.dwarf(a.operands[mem].mem.base);
  if (!base || (*base != r::sp && *base != r::x29)) return false;
  const bool post = a.writeback && mem + 1 < a.op_count && a.operands[mem + 1].type == ARM64_OP_IMM;
  const bool pre = a.writeback && !post;
  int64_t disp = a.operands[mem].mem.disp;
  if (a.writeback && *base != r::sp) {
    m.set_fp(std::nullopt);
    m.write(r::x29);
  }
  if (pre && *base == r::sp) {
    m.move_sp(disp);
    disp = 0;
  }
  int64_t at = disp;  // an AArch64 offset fits 16 bits: no overflow
  for (int i = 0; i < mem; ++i) {
    const cs_arm64_op& op = a.operands[i];
    if (op.type != ARM64_OP_REG) return false;
    const auto slot = m.cfa_offset(*base, at);
    const auto reg = d.dwarf(op.reg);
    if (is_store) {
      if (reg && d.full_width(op.reg))
        m.store(*reg, slot);
      else
        m.store_other(slot);
    } else if (reg) {
      if (*reg == r::sp) m.set_sp(std::nullopt);
      if (d.full_width(op.reg))
        m.load(*reg, slot);
      else
        m.write(*reg);
      if (*reg == r::x29) m.set_fp(std::nullopt);
    }
    at += width(d, op.reg);
  }
  if (post && *base == r::sp) m.move_sp(a.operands[mem + 1].imm);
  return true;
}

// add/sub/mov between sp, x29 and immediates.
bool arithmetic(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  const cs_arm64& a = insn.detail->arm64;
  if (a.op_count < 2 || a.operands[0].type != ARM64_OP_REG || a.operands[1].type != ARM64_OP_REG)
    return false;
  const auto dst = d.dwarf(a.operands[0].reg);
  const auto src = d.dwarf(a.operands[1].reg);
  if (!dst || !src || !d.full_width(a.operands[0].reg) || !d.full_width(a.operands[1].reg))
    return false;
  int64_t add = 0;
  if (insn.id == ARM64_INS_MOV) {
    if (a.op_count != 2) return false;
  } else {
    if (a.op_count != 3 || a.operands[2].type != ARM64_OP_IMM) return false;
    add = insn.id == ARM64_INS_ADD ? shifted(a.operands[2]) : minus(0, shifted(a.operands[2])).value_or(kMaxFrame + 1);
  }
  // CFA - dst = (CFA - src) - add.
  const std::optional<int64_t> from = *src == r::sp    ? m.sp()
                                      : *src == r::x29 ? m.fp()
                                                       : std::nullopt;
  const std::optional<int64_t> value = minus(from, add);
  if (*dst == r::sp) {
    if (*src != r::sp && *src != r::x29) return false;
    m.set_sp(value);
    return true;
  }
  if (*dst == r::x29) {
    m.write(r::x29);
    m.set_fp(*src == r::sp || *src == r::x29 ? value : std::nullopt);
    return true;
  }
  return false;
}

}  // namespace

Flow apply_aarch64(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  const cs_arm64& a = insn.detail->arm64;
  bool done = false;
  switch (insn.id) {
    case ARM64_INS_RET:
    case ARM64_INS_BR:
    case ARM64_INS_BRK:
    case ARM64_INS_HLT: return Flow::Terminal;
    case ARM64_INS_B:
      if (a.cc == ARM64_CC_INVALID || a.cc == ARM64_CC_AL) return Flow::Terminal;
      return Flow::Next;
    case ARM64_INS_BL:
    case ARM64_INS_BLR: m.call(); return Flow::Call;
    case ARM64_INS_NOP: return Flow::Padding;
    case ARM64_INS_STP:
    case ARM64_INS_STR:
    case ARM64_INS_STUR:
    case ARM64_INS_STNP: done = transfer(m, d, insn, true); break;
    case ARM64_INS_LDP:
    case ARM64_INS_LDR:
    case ARM64_INS_LDUR:
    case ARM64_INS_LDNP: done = transfer(m, d, insn, false); break;
    case ARM64_INS_ADD:
    case ARM64_INS_SUB:
    case ARM64_INS_MOV: done = arithmetic(m, d, insn); break;
    default: break;
  }
  if (!done) write_all(m, d, insn);
  return Flow::Next;
}

}  // namespace unwindkit::prologue::detail
