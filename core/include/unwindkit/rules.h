// The format-neutral unwind rule model.
//
// Every unwind format (SFrame, Apple compact unwind, DWARF CFI) lowers "what is true at this
// PC" into one UnwindRule; the single stepper (stepper.h) applies a rule to a register set
// through a memory-read callback. Formats never read memory; the stepper never parses tables.
//
// Registers are named by their DWARF numbers (the numbering every one of these formats
// either uses already or maps onto exactly): arch.h's table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/arch.h"

namespace unwindkit {

// How the Canonical Frame Address is found. The CFA is the value of the stack pointer
// just before the call into this frame (x86_64, AArch64), or that value + 160 (s390x).
struct CfaRule {
  enum class Kind : uint8_t {
    RegOffset,       // CFA = reg + offset
    DerefRegOffset,  // CFA = *(reg + offset)        (SFrame v3 flex, DWARF `breg; deref`)
  };
  Kind kind = Kind::RegOffset;
  uint16_t reg = 0;
  int64_t offset = 0;

  bool operator==(const CfaRule&) const = default;
};

// How the caller's value of one register is recovered.
struct RegRule {
  enum class Kind : uint8_t {
    Unchanged,  // caller's value = this frame's value (register not touched here)
    Undefined,  // not recoverable; for the return address: this is the outermost frame
    AtCfa,      // value = *(CFA + offset)
    ValCfa,     // value = CFA + offset
    InReg,      // value = reg + offset            (AArch64 leaf: RA in x30, offset 0)
    AtReg,      // value = *(reg + offset)
  };
  Kind kind = Kind::Unchanged;
  uint16_t reg = 0;
  int64_t offset = 0;

  static constexpr RegRule unchanged() { return {}; }
  static constexpr RegRule undefined() { return {Kind::Undefined, 0, 0}; }
  static constexpr RegRule at_cfa(int64_t off) { return {Kind::AtCfa, 0, off}; }
  static constexpr RegRule val_cfa(int64_t off) { return {Kind::ValCfa, 0, off}; }
  static constexpr RegRule in_reg(uint16_t r, int64_t off = 0) { return {Kind::InReg, r, off}; }
  static constexpr RegRule at_reg(uint16_t r, int64_t off) { return {Kind::AtReg, r, off}; }

  // True when the rule needs a register other than the CFA: such rules are trustworthy only
  // in the innermost frame (or right above a signal frame), where every register is known.
  bool uses_register() const { return kind == Kind::InReg || kind == Kind::AtReg; }
  bool operator==(const RegRule&) const = default;
};

struct SavedReg {
  uint16_t reg;  // DWARF number
  RegRule rule;
  bool operator==(const SavedReg&) const = default;
};

enum class PauthKey : uint8_t { A, B };

// Which table produced a rule (and so a frame): shown to users per frame. EntryPoint is the
// program's entry point, outermost by definition (unwind/entry_point.h).
enum class Source : uint8_t { Cfi, SFrame, CompactUnwind, FramePointer, EntryPoint };
// "cfi", "sframe", "compact-unwind", "fp", "entry"
std::string_view source_name(Source source);

// What a callee-saved register that a rule does not name holds in the caller.
enum class Unlisted : uint8_t {
  // The table states every save (DWARF CFI, compact unwind), or the code proved the register
  // untouched: the caller's value is this frame's.
  Unchanged,
  // Nothing proves it (bare SFrame, which states only CFA, RA and FP; a frame-pointer guess):
  // unavailable in the caller, never carried on trust. A function that saved and reused it
  // (`push %rbx` ... `pop %rbx`) would otherwise show the callee's value as the caller's.
  Unavailable,
};

// Everything known about unwinding one frame whose PC lies in [func_start, func_end).
struct UnwindRule {
  Arch arch = Arch::X86_64;
  Source source = Source::SFrame;
  CfaRule cfa;
  RegRule ra;  // return address: x86_64 rip column, AArch64 x30, s390x r14
  RegRule fp;  // frame pointer: rbp, x29, r11
  // Further callee-saved registers this rule recovers (compact unwind's saved pairs, CFI, the
  // prologue analyzer's slots for SFrame). Callee-saved registers listed nowhere follow
  // `unlisted`; other registers are unavailable in the caller.
  std::vector<SavedReg> saved;
  Unlisted unlisted = Unlisted::Unavailable;
  // Caller's SP = CFA + sp_from_cfa (0 on x86_64/AArch64; -160 on s390x).
  int64_t sp_from_cfa = 0;
  bool ra_mangled = false;  // AArch64 PAC-signed return address: strip before use
  PauthKey pauth_key = PauthKey::A;
  bool signal_frame = false;  // a kernel signal frame: the caller is looked up at its pc
  uint64_t func_start = 0;
  uint64_t func_end = 0;

  // The outermost frame: nothing called it, so its return address is undefined and a walk
  // ends here, successfully. Stated by the RA rule alone, in every format.
  bool outermost() const { return ra.kind == RegRule::Kind::Undefined; }

  bool operator==(const UnwindRule&) const = default;
};

// The callee-saved registers whose caller's value `rule` says is this frame's: every one it
// does not name when `unlisted` is Unchanged (none otherwise), and the frame pointer when its
// rule is unchanged. The stepper carries these; a debugger front end that gave the stepper
// only some registers passes these through itself.
std::vector<uint16_t> carried_registers(const UnwindRule& rule);

// One-line human description, e.g. "cfa=rsp+16 ra=[cfa-8] fp=[cfa-16]".
std::string describe(const UnwindRule& rule);

}  // namespace unwindkit
