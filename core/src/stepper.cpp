// The one stepper (stepper.h): applies an UnwindRule to one frame's registers, reading the
// stack through a MemoryReader. Every value of the caller is computed from the callee's
// registers and the CFA, never from half-built caller state, so the order of rules does not
// matter.
#include "unwindkit/stepper.h"

#include <fmt/format.h>

#include <array>

namespace unwindkit {

namespace {

constexpr std::string_view kStack = "stack";
constexpr std::string_view kRegisters = "registers";

class Stepper {
 public:
  Stepper(const UnwindRule& rule, const RegisterSet& regs, const MemoryReader& mem,
          const StepOptions& options)
      : rule_(rule), regs_(regs), mem_(mem), options_(options), arch_(arch_info(rule.arch)) {}

  Result<StepResult> run() {
    if (regs_.arch() != rule_.arch)
      return fail(kRegisters, 0, "arch",
                  fmt::format("rule is for {} but the registers are {}", arch_name(rule_.arch),
                              arch_name(regs_.arch())));
    auto cfa = compute_cfa();
    if (!cfa) return tl::unexpected(cfa.error());
    cfa_ = *cfa;

    StepResult out{RegisterSet(rule_.arch), cfa_, false};
    RegisterSet& caller = out.caller;
    caller.set_stepped_by(rule_.source);
    for (uint16_t r : carried_registers(rule_))
      if (auto v = regs_.get(r)) caller.set(r, *v, RegOrigin::Carried);

    if (auto ok = apply(arch_.fp, rule_.fp, caller, RegOrigin::Table); !ok)
      return tl::unexpected(ok.error());
    // SFrame states only CFA, RA and FP: its `saved` slots are the prologue analyzer's.
    const RegOrigin saved_origin =
        rule_.source == Source::SFrame ? RegOrigin::Code : RegOrigin::Table;
    bool sp_saved = false;
    for (const SavedReg& s : rule_.saved) {
      if (s.reg == arch_.sp) sp_saved = true;
      if (auto ok = apply(s.reg, s.rule, caller, saved_origin); !ok)
        return tl::unexpected(ok.error());
    }
    if (!sp_saved)
      caller.set(arch_.sp, mask(cfa_ + static_cast<uint64_t>(rule_.sp_from_cfa)), RegOrigin::Table);

    if (rule_.outermost()) {
      out.outermost = true;
      return out;
    }
    auto ra = value_of(arch_.ra, rule_.ra, true);
    if (!ra) return tl::unexpected(ra.error());
    uint64_t pc = **ra;
    if (rule_.ra_mangled) pc &= ~options_.pac_mask;
    caller.set_pc(mask(pc));
    return out;
  }

 private:
  uint64_t mask(uint64_t v) const { return arch_.word_size == 4 ? (v & 0xffffffffull) : v; }
  uint64_t add(uint64_t base, int64_t off) const {
    return mask(base + static_cast<uint64_t>(off));
  }

  std::string name(uint16_t r) const { return reg_name(rule_.arch, r); }

  // SP and FP are known in every frame (SP from the CFA, FP carried or recovered), so rules
  // based on them hold everywhere: signal trampolines, DRAP functions, frame-pointer rules.
  // Another register is trusted where every register is (trust_all_registers), or where a
  // rule proved its value; one a debugger handed us for an outer frame is not.
  bool trusted(uint16_t r) const {
    if (options_.trust_all_registers || r == arch_.sp || r == arch_.fp) return true;
    return regs_.known(r) && regs_.origin(r) != RegOrigin::Thread;
  }

  Result<uint64_t> read_word(uint64_t addr, std::string_view field) const {
    const unsigned size = arch_.word_size;
    std::array<uint8_t, 8> buf{};
    if (!mem_.read(addr, std::span<uint8_t>(buf.data(), size)))
      return fail(ErrorKind::UnreadableMemory, kStack, addr, field,
                  fmt::format("cannot read {} bytes at 0x{:x}", size, addr));
    ByteReader r(Bytes(buf.data(), size), options_.endian, kStack, addr);
    return r.uint(size, field);
  }

  Result<uint64_t> reg_value(uint16_t r, std::string_view field) const {
    if (auto v = regs_.get(r)) return *v;
    return fail(ErrorKind::UnknownRegister, kRegisters, 0, field,
                fmt::format("{} has no known value", name(r)));
  }

  Result<uint64_t> compute_cfa() const {
    const CfaRule& c = rule_.cfa;
    if (!trusted(c.reg))
      return fail(ErrorKind::UnknownRegister, kRegisters, 0, "cfa",
                  fmt::format("CFA from {} is trusted only in the innermost frame", name(c.reg)));
    auto base = reg_value(c.reg, "cfa");
    if (!base) return base;
    const uint64_t addr = add(*base, c.offset);
    if (c.kind == CfaRule::Kind::RegOffset) return addr;
    return read_word(addr, "cfa");
  }

  // The caller's value of `target` under `rule`: nullopt when the rule leaves it unknown.
  // For the return address (`is_ra`) an unknown value is an error; for other registers a
  // register-based rule that is not trusted here only makes the register unknown.
  Result<std::optional<uint64_t>> value_of(uint16_t target, const RegRule& rule,
                                           bool is_ra) const {
    const std::string field = is_ra ? "ra" : name(target);
    switch (rule.kind) {
      case RegRule::Kind::Undefined: return std::nullopt;
      case RegRule::Kind::Unchanged: {
        auto v = regs_.get(target);
        if (!v && is_ra)
          return fail(ErrorKind::UnknownRegister, kRegisters, 0, field,
                      fmt::format("{} has no known value", name(target)));
        return v;
      }
      case RegRule::Kind::AtCfa: return read_word(add(cfa_, rule.offset), field);
      case RegRule::Kind::ValCfa: return add(cfa_, rule.offset);
      case RegRule::Kind::InReg:
      case RegRule::Kind::AtReg: {
        if (!trusted(rule.reg)) {
          if (!is_ra) return std::nullopt;
          return fail(ErrorKind::UnknownRegister, kRegisters, 0, field,
                      fmt::format("return address from {} is trusted only in the innermost frame",
                                  name(rule.reg)));
        }
        auto base = regs_.get(rule.reg);
        if (!base) {
          if (!is_ra) return std::nullopt;
          return fail(ErrorKind::UnknownRegister, kRegisters, 0, field,
                      fmt::format("{} has no known value", name(rule.reg)));
        }
        const uint64_t v = add(*base, rule.offset);
        if (rule.kind == RegRule::Kind::InReg) return v;
        return read_word(v, field);
      }
    }
    return std::nullopt;
  }

  // Sets the caller's `target` by `rule`: an unchanged rule carries the value (when known).
  Result<void> apply(uint16_t target, const RegRule& rule, RegisterSet& caller,
                     RegOrigin origin) const {
    auto v = value_of(target, rule, false);
    if (!v) return tl::unexpected(v.error());
    if (*v)
      caller.set(target, mask(**v),
                 rule.kind == RegRule::Kind::Unchanged ? RegOrigin::Carried : origin);
    else
      caller.forget(target);
    return {};
  }

  const UnwindRule& rule_;
  const RegisterSet& regs_;
  const MemoryReader& mem_;
  const StepOptions& options_;
  const ArchInfo& arch_;
  uint64_t cfa_ = 0;
};

}  // namespace

std::optional<uint64_t> RegisterSet::sp() const { return get(sp_reg()); }
std::optional<uint64_t> RegisterSet::fp() const { return get(fp_reg()); }
uint16_t RegisterSet::sp_reg() const { return arch_info(arch_).sp; }
uint16_t RegisterSet::fp_reg() const { return arch_info(arch_).fp; }
uint16_t RegisterSet::ra_reg() const { return arch_info(arch_).ra; }

Result<StepResult> step(const UnwindRule& rule, const RegisterSet& regs, const MemoryReader& mem,
                        const StepOptions& options) {
  return Stepper(rule, regs, mem, options).run();
}

}  // namespace unwindkit
