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

// Where a frame's register value came from (`unwindkit bt --registers`).
enum class RegOrigin : uint8_t {
  Thread,   // read from the thread itself: the innermost frame, or a frame a debugger gave us
  Carried,  // the callee's value, proven unchanged (a rule's `unlisted`, an unchanged rule)
  Table,    // the callee's rule recovered it from its table (CFA, a saved slot, a register)
  Code,     // the prologue analyzer found its slot in the code (SFrame + code)
};

// Registers of one frame, by DWARF number (rules.h), plus the PC kept on its own (the PC
// has no DWARF column on x86_64). A register not `known` has no trustworthy value: the
// stepper leaves a register unknown unless a rule proves it, so a known register is a
// trustworthy one in every frame.
class RegisterSet {
 public:
  static constexpr size_t kMaxRegs = 128;  // covers AArch64 v0..v31 at 64..95

  explicit RegisterSet(Arch arch = Arch::X86_64) : arch_(arch) {}
  Arch arch() const { return arch_; }

  std::optional<uint64_t> get(uint16_t dwarf_reg) const {
    if (dwarf_reg >= kMaxRegs || !known_[dwarf_reg]) return std::nullopt;
    return values_[dwarf_reg];
  }
  void set(uint16_t dwarf_reg, uint64_t value, RegOrigin origin = RegOrigin::Thread) {
    if (dwarf_reg >= kMaxRegs) return;
    values_[dwarf_reg] = value;
    known_[dwarf_reg] = true;
    origins_[dwarf_reg] = origin;
  }
  RegOrigin origin(uint16_t dwarf_reg) const {
    return dwarf_reg < kMaxRegs ? origins_[dwarf_reg] : RegOrigin::Thread;
  }
  // The table whose rule computed these registers from the callee's (nullopt: the thread's).
  std::optional<Source> stepped_by() const { return stepped_by_; }
  void set_stepped_by(Source source) { stepped_by_ = source; }
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
  std::array<RegOrigin, kMaxRegs> origins_{};
  std::optional<Source> stepped_by_;
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
  // Every register the frame holds is trusted: the innermost frame and the frame right above
  // a signal frame, whose registers the thread or the kernel saved. Elsewhere a rule may use
  // SP, FP and any register a rule proved (RegOrigin Table or Code) but not one carried
  // from a frame a debugger supplied without saying how it knows it.
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
