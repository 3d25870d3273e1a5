// The one stepper: applies an UnwindRule to a frame's registers through a memory-read
// interface and yields the caller's registers. It is the only code that touches memory;
// format readers never do (see rules.h).
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <span>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit {

// Registers of one frame, by DWARF number (rules.h), plus the PC kept on its own (the PC
// has no DWARF column on x86_64). A register not `known` has no trustworthy value.
class RegisterSet {
 public:
  static constexpr size_t kMaxRegs = 128;  // covers AArch64 v0..v31 at 64..95

  explicit RegisterSet(Arch arch = Arch::X86_64) : arch_(arch) {}
  Arch arch() const { return arch_; }

  std::optional<uint64_t> get(uint16_t dwarf_reg) const {
    if (dwarf_reg >= kMaxRegs || !known_[dwarf_reg]) return std::nullopt;
    return values_[dwarf_reg];
  }
  void set(uint16_t dwarf_reg, uint64_t value) {
    if (dwarf_reg >= kMaxRegs) return;
    values_[dwarf_reg] = value;
    known_[dwarf_reg] = true;
  }
  void forget(uint16_t dwarf_reg) {
    if (dwarf_reg < kMaxRegs) known_[dwarf_reg] = false;
  }
  bool known(uint16_t dwarf_reg) const { return dwarf_reg < kMaxRegs && known_[dwarf_reg]; }

  std::optional<uint64_t> pc() const { return pc_; }
  void set_pc(uint64_t pc) { pc_ = pc; }
  // The stack pointer and frame pointer registers of this architecture (arch_info()).
  std::optional<uint64_t> sp() const;
  std::optional<uint64_t> fp() const;
  uint16_t sp_reg() const;
  uint16_t fp_reg() const;
  uint16_t ra_reg() const;  // the return-address column (rip, x30, r14)

  bool operator==(const RegisterSet&) const = default;

 private:
  Arch arch_;
  std::array<uint64_t, kMaxRegs> values_{};
  std::bitset<kMaxRegs> known_;
  std::optional<uint64_t> pc_;
};

// Memory of the process being unwound (core file, live process, debugger).
class MemoryReader {
 public:
  virtual ~MemoryReader() = default;
  // Fills `out` from [addr, addr + out.size()); false if any byte is unreadable.
  virtual bool read(uint64_t addr, std::span<uint8_t> out) const = 0;
};

struct StepOptions {
  Endian endian = Endian::Little;
  // Rules that take a register's value (RegRule::uses_register, CFA from a register other
  // than SP/FP) are trusted only in the innermost frame and right above a signal frame.
  bool trust_all_registers = false;
  // AArch64: bits that hold a PAC signature in a return address (cleared when the rule
  // says the RA is mangled). Default: a 48-bit virtual address space.
  uint64_t pac_mask = 0xffff000000000000ull;
};

struct StepResult {
  RegisterSet caller;  // caller's registers; caller.pc() is the return address
  uint64_t cfa = 0;    // this frame's CFA
  bool outermost = false;  // the rule said RA undefined: nothing above this frame
};

// Applies `rule` to `regs`. Errors name what could not be computed ("stack" section, the
// address that could not be read, and the register or CFA being recovered).
Result<StepResult> step(const UnwindRule& rule, const RegisterSet& regs, const MemoryReader& mem,
                        const StepOptions& options = {});

}  // namespace unwindkit
