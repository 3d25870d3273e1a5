#include "unwindkit/dwarf/lower.h"

#include <dwarf.h>
#include <fmt/format.h>

#include <optional>
#include <string>

namespace unwindkit::dwarf {

namespace {

// Operand values are Dwarf_Word; signed operands (breg offsets, sdata) are stored two's
// complement, and an unsigned plus_uconst that wraps is a negative offset the same way.
int64_t as_signed(Dwarf_Word w) { return static_cast<int64_t>(w); }

std::string op_text(const Dwarf_Op& op) {
  if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31)
    return fmt::format("DW_OP_breg{} {}", op.atom - DW_OP_breg0, as_signed(op.number));
  if (op.atom >= DW_OP_lit0 && op.atom <= DW_OP_lit31)
    return fmt::format("DW_OP_lit{}", op.atom - DW_OP_lit0);
  switch (op.atom) {
    case DW_OP_bregx: return fmt::format("DW_OP_bregx {} {}", op.number, as_signed(op.number2));
    case DW_OP_regx: return fmt::format("DW_OP_regx {}", op.number);
    case DW_OP_deref: return "DW_OP_deref";
    case DW_OP_plus_uconst: return fmt::format("DW_OP_plus_uconst {}", as_signed(op.number));
    case DW_OP_plus: return "DW_OP_plus";
    case DW_OP_and: return "DW_OP_and";
    case DW_OP_ge: return "DW_OP_ge";
    case DW_OP_shl: return "DW_OP_shl";
    case DW_OP_call_frame_cfa: return "DW_OP_call_frame_cfa";
    case DW_OP_stack_value: return "DW_OP_stack_value";
    default: return fmt::format("DW_OP_{:#04x}", op.atom);
  }
}

tl::unexpected<Error> unsupported(std::span<const Dwarf_Op> ops, std::string_view field,
                                  const LowerContext& ctx) {
  std::string text;
  for (const Dwarf_Op& op : ops) text += (text.empty() ? "" : "; ") + op_text(op);
  return fail(ctx.section, ctx.address, field,
              fmt::format("unsupported DWARF expression at pc {:#x}: {}", ctx.address, text));
}

// `breg R off` or `bregx R off`, optionally followed by `plus_uconst N`: R + off + N.
struct RegPlus {
  uint16_t reg = 0;
  int64_t offset = 0;
};

// Reads a base-register prefix; returns how many ops it used (0 if `ops` does not start
// with one).
size_t read_reg_plus(std::span<const Dwarf_Op> ops, RegPlus& out) {
  if (ops.empty()) return 0;
  const Dwarf_Op& first = ops[0];
  if (first.atom >= DW_OP_breg0 && first.atom <= DW_OP_breg31) {
    out = {static_cast<uint16_t>(first.atom - DW_OP_breg0), as_signed(first.number)};
  } else if (first.atom == DW_OP_bregx && first.number <= UINT16_MAX) {
    out = {static_cast<uint16_t>(first.number), as_signed(first.number2)};
  } else {
    return 0;
  }
  if (ops.size() > 1 && ops[1].atom == DW_OP_plus_uconst) {
    out.offset += as_signed(ops[1].number);
    return 2;
  }
  return 1;
}

}  // namespace

Result<CfaRule> lower_cfa(std::span<const Dwarf_Op> ops, const LowerContext& ctx) {
  if (ops.empty()) return fail(ctx.section, ctx.address, "cfa", fmt::format("no CFA rule at pc {:#x}", ctx.address));
  RegPlus base;
  const size_t used = read_reg_plus(ops, base);
  if (used == ops.size()) return CfaRule{CfaRule::Kind::RegOffset, base.reg, base.offset};
  if (used > 0 && used + 1 == ops.size() && ops[used].atom == DW_OP_deref)
    return CfaRule{CfaRule::Kind::DerefRegOffset, base.reg, base.offset};
  return unsupported(ops, "cfa", ctx);
}

Result<RegRule> lower_register(int result, const Dwarf_Op* ops, size_t nops,
                               std::string_view field, const LowerContext& ctx) {
  if (result < 0)
    return fail(ctx.section, ctx.address, field, dwarf_errmsg(-1));
  if (nops == 0) return ops == nullptr ? RegRule::unchanged() : RegRule::undefined();
  std::span<const Dwarf_Op> expr(ops, nops);
  bool is_value = result == 1;
  if (expr.back().atom == DW_OP_stack_value) {
    is_value = true;
    expr = expr.first(expr.size() - 1);
  }
  if (expr.empty()) return unsupported({ops, nops}, field, ctx);

  if (expr[0].atom == DW_OP_call_frame_cfa) {
    if (expr.size() == 1) return is_value ? RegRule::val_cfa(0) : RegRule::at_cfa(0);
    if (expr.size() == 2 && expr[1].atom == DW_OP_plus_uconst) {
      const int64_t off = as_signed(expr[1].number);
      return is_value ? RegRule::val_cfa(off) : RegRule::at_cfa(off);
    }
    // DW_CFA_expression / val_expression run with the CFA already pushed (DWARF 5
    // §6.4.2.3), and libdw makes that push explicit. An expression that pushes its own
    // complete value leaves the CFA unused underneath.
    expr = expr.subspan(1);
  }
  if (expr.size() == 1 && expr[0].atom == DW_OP_regx && expr[0].number <= UINT16_MAX)
    return RegRule::in_reg(static_cast<uint16_t>(expr[0].number));
  RegPlus base;
  if (read_reg_plus(expr, base) == expr.size())
    return is_value ? RegRule::in_reg(base.reg, base.offset) : RegRule::at_reg(base.reg, base.offset);
  return unsupported({ops, nops}, field, ctx);
}

}  // namespace unwindkit::dwarf
