// x86_64 (Capstone's Intel operand order: destination first).
#include <capstone/capstone.h>

#include "instructions.h"

namespace unwindkit::prologue::detail {

namespace {

namespace r = reg::x86_64;

std::optional<uint16_t> reg_of(const Decoder& d, const cs_x86_op& op) {
  if (op.type != X86_OP_REG) return std::nullopt;
  return d.dwarf(op.reg);
}

bool is(const Decoder& d, const cs_x86_op& op, uint16_t dwarf) {
  return op.type == X86_OP_REG && d.full_width(op.reg) && d.dwarf(op.reg) == dwarf;
}

// The CFA offset of a memory operand based on RSP or RBP (no index, no segment).
std::optional<int64_t> slot_of(const FrameModel& m, const Decoder& d, const cs_x86_op& op) {
  if (op.type != X86_OP_MEM || op.mem.index != X86_REG_INVALID ||
      op.mem.segment != X86_REG_INVALID)
    return std::nullopt;
  const auto base = d.dwarf(op.mem.base);
  if (!base) return std::nullopt;
  return m.cfa_offset(*base, op.mem.disp);
}

// A pop into `dst` (nullopt: into memory or a register without a DWARF number).
void pop_into(FrameModel& m, std::optional<uint16_t> dst, bool full_width) {
  const std::optional<int64_t> slot = m.sp_slot();
  m.move_sp(8);
  if (!dst) return;
  if (*dst == r::rsp) {
    m.set_sp(std::nullopt);
    return;
  }
  if (full_width)
    m.load(*dst, slot);
  else
    m.write(*dst);
  if (*dst == r::rbp) m.set_fp(std::nullopt);
}

// The instructions modelled; false: fall back to the registers written.
bool modelled(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  const cs_x86& x = insn.detail->x86;
  const cs_x86_op* op = x.operands;
  switch (insn.id) {
    case X86_INS_PUSH: {
      if (x.op_count != 1 || op[0].size != 8) return false;
      m.grow(8);
      const std::optional<int64_t> slot = m.sp_slot();
      if (const auto src = reg_of(d, op[0]); src && d.full_width(op[0].reg))
        m.store(*src, slot);
      else
        m.store_other(slot);
      return true;
    }
    case X86_INS_POP:
      if (x.op_count != 1 || op[0].size != 8) return false;
      pop_into(m, reg_of(d, op[0]), op[0].type == X86_OP_REG && d.full_width(op[0].reg));
      return true;
    case X86_INS_LEAVE:
      m.set_sp(m.fp());
      pop_into(m, r::rbp, true);
      return true;
    case X86_INS_SUB:
    case X86_INS_ADD:
      if (x.op_count == 2 && is(d, op[0], r::rsp) && op[1].type == X86_OP_IMM) {
        if (insn.id == X86_INS_ADD)
          m.move_sp(op[1].imm);
        else
          m.grow(op[1].imm);
        return true;
      }
      return false;
    case X86_INS_LEA: {
      if (x.op_count != 2 || op[1].mem.index != X86_REG_INVALID) return false;
      const auto base = d.dwarf(op[1].mem.base);
      const std::optional<int64_t> from = !base             ? std::nullopt
                                          : *base == r::rsp ? m.sp()
                                          : *base == r::rbp ? m.fp()
                                                            : std::nullopt;
      const std::optional<int64_t> value = minus(from, op[1].mem.disp);
      if (is(d, op[0], r::rsp)) {
        m.set_sp(value);
        return true;
      }
      if (is(d, op[0], r::rbp)) {
        m.write(r::rbp);
        m.set_fp(value);
        return true;
      }
      return false;
    }
    case X86_INS_MOV:
      if (x.op_count != 2) return false;
      if (is(d, op[0], r::rsp) && is(d, op[1], r::rbp)) {
        m.set_sp(m.fp());
        return true;
      }
      if (is(d, op[0], r::rbp) && is(d, op[1], r::rsp)) {
        m.write(r::rbp);
        m.set_fp(m.sp());
        return true;
      }
      if (op[0].type == X86_OP_MEM) {
        const auto slot = slot_of(m, d, op[0]);
        if (const auto src = reg_of(d, op[1]); src && d.full_width(op[1].reg))
          m.store(*src, slot);
        else
          m.store_other(slot);
        return true;
      }
      if (op[1].type == X86_OP_MEM && op[0].type == X86_OP_REG && d.full_width(op[0].reg)) {
        const auto dst = d.dwarf(op[0].reg);
        if (!dst || *dst == r::rsp || *dst == r::rbp) return false;
        m.load(*dst, slot_of(m, d, op[1]));
        return true;
      }
      return false;
    default: return false;
  }
}

}  // namespace

Flow apply_x86_64(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  if (x86_64_never_falls_through(insn.id)) return Flow::Terminal;
  switch (insn.id) {
    case X86_INS_CALL:
    case X86_INS_LCALL: m.call(); return Flow::Call;
    case X86_INS_NOP: return Flow::Padding;
    default: break;
  }
  if (!modelled(m, d, insn)) write_all(m, d, insn);
  return Flow::Next;
}

}  // namespace unwindkit::prologue::detail
