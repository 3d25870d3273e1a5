// The format-neutral unwind rule model.
//
// Every unwind format (SFrame, Apple compact unwind, DWARF CFI) lowers "what is true at this
// PC" into one UnwindRule; the single stepper (stepper.h) applies a rule to a register set
// through a memory-read callback. Formats never read memory; the stepper never parses tables.
//
// Registers are named by their DWARF numbers (the numbering every one of these formats
// either uses already or maps onto exactly), see the `reg` namespaces below.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace unwindkit {

enum class Arch : uint8_t { X86_64, AArch64, S390x, I386 };

std::string_view arch_name(Arch arch);
// Bytes in a pointer / stack slot.
unsigned arch_word_size(Arch arch);

// DWARF register numbers (System V psABI for x86_64/i386, AAPCS64 DWARF for AArch64,
// s390x ELF ABI). Only what the rule model and stepper name explicitly is listed.
namespace reg {
namespace x86_64 {
inline constexpr uint16_t rax = 0, rdx = 1, rcx = 2, rbx = 3, rsi = 4, rdi = 5, rbp = 6, rsp = 7;
inline constexpr uint16_t r8 = 8, r9 = 9, r10 = 10, r11 = 11, r12 = 12, r13 = 13, r14 = 14,
                          r15 = 15;
inline constexpr uint16_t rip = 16;  // the return-address column
}  // namespace x86_64
namespace i386 {
inline constexpr uint16_t eax = 0, ecx = 1, edx = 2, ebx = 3, esp = 4, ebp = 5, esi = 6, edi = 7;
inline constexpr uint16_t eip = 8;
}  // namespace i386
namespace aarch64 {
inline constexpr uint16_t x0 = 0, x19 = 19, x29 = 29 /* fp */, x30 = 30 /* lr */, sp = 31;
inline constexpr uint16_t pc = 32;
inline constexpr uint16_t v0 = 64, d8 = 72;  // d8..d15 = 72..79 (low 64 bits of v8..v15)
}  // namespace aarch64
namespace s390x {
inline constexpr uint16_t r0 = 0, r6 = 6, r11 = 11 /* fp */, r14 = 14 /* ra */, r15 = 15 /* sp */;
}  // namespace s390x
}  // namespace reg

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

// Which table produced a rule (and so a frame): shown to users per frame.
enum class Source : uint8_t { Cfi, SFrame, CompactUnwind, FramePointer };
std::string_view source_name(Source source);  // "cfi", "sframe", "compact-unwind", "fp"

// Everything known about unwinding one frame whose PC lies in [func_start, func_end).
struct UnwindRule {
  Arch arch = Arch::X86_64;
  Source source = Source::SFrame;
  CfaRule cfa;
  RegRule ra;  // return address: x86_64 rip column, AArch64 x30, s390x r14
  RegRule fp;  // frame pointer: rbp, x29, r11
  // Further callee-saved registers this rule recovers (compact unwind's saved pairs, CFI).
  // Registers listed nowhere follow the stepper's defaults (callee-saved: unchanged).
  std::vector<SavedReg> saved;
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

// One-line human description, e.g. "cfa=rsp+16 ra=[cfa-8] fp=[cfa-16]".
std::string describe(const UnwindRule& rule);
std::string reg_name(Arch arch, uint16_t dwarf_reg);

}  // namespace unwindkit
