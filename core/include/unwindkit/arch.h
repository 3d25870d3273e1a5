// Every per-architecture register fact, once (one table, in the manner of LLVM's
// BinaryFormat): for x86_64, AArch64, s390x and i386 the stack pointer, frame pointer and
// return-address column, how the PC is found, the word size, and each register's DWARF
// number, callee-saved status and names (ours, GDB's, LLDB's). The rule model, the stepper,
// the format lowerings and both debugger plugins read this table; nothing else spells these.
//
// DWARF numbering: System V psABI for x86_64 and i386, "DWARF for the Arm 64-bit
// Architecture" for AArch64, the s390x ELF ABI supplement for s390x.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace unwindkit {

enum class Arch : uint8_t { X86_64, AArch64, S390x, I386 };

// DWARF register numbers the code names explicitly (the table below lists every register).
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
inline constexpr uint16_t f0 = 16;  // f0 f2 f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13 f15
}  // namespace s390x
}  // namespace reg

struct RegisterInfo {
  uint16_t dwarf;              // DWARF register number
  std::string_view name;       // ours: describe(), dumps, errors
  std::string_view gdb_name;   // what GDB calls it (gdb.PendingFrame.read_register)
  std::string_view lldb_name;  // what LLDB calls it (SBFrame::FindRegister)
  bool callee_saved;           // ABI non-volatile: the caller's value is this frame's unless saved
  bool general;                // a general register: read from a debugger's frame for a walk
};

struct ArchInfo {
  Arch arch;
  std::string_view name;  // "x86_64", "aarch64", "s390x", "i386"
  unsigned word_size;     // bytes in a pointer / stack slot
  uint16_t sp, fp, ra;    // DWARF numbers: stack pointer, frame pointer, return-address column
  // A call leaves the return address in the `ra` register (a link register: AArch64 x30,
  // s390x r14), where a leaf function keeps it; else the call pushes it (x86).
  bool ra_in_register;
  // The caller's SP is CFA + sp_from_cfa (s390x: the CFA is 160 bytes above the SP).
  int64_t sp_from_cfa;
  // The PC is not unwound as a register: a frame's PC is kept apart (RegisterSet::pc) and a
  // caller's is the value of the return-address column. `pc` is the PC's own DWARF number
  // where the ABI gives it one (x86 rip/eip, which is also the return-address column;
  // AArch64 32); s390x has none. The names are the debuggers' for it.
  std::optional<uint16_t> pc;
  std::string_view gdb_pc_name, lldb_pc_name;
  // Every register of the table, in DWARF-number order; the general ones come first.
  std::span<const RegisterInfo> registers;
};

const ArchInfo& arch_info(Arch arch);

std::string_view arch_name(Arch arch);
// Bytes in a pointer / stack slot.
unsigned arch_word_size(Arch arch);

// The table's row for `dwarf_reg`; nullptr when the table has none.
const RegisterInfo* register_info(Arch arch, uint16_t dwarf_reg);
// Our name for a DWARF register ("rbp", "fp", "d8"); "r<n>" for one the table lacks.
std::string reg_name(Arch arch, uint16_t dwarf_reg);
// The callee-saved registers (RegisterInfo::callee_saved), in DWARF order: carried into the
// caller unchanged unless a rule says where they were saved.
std::span<const uint16_t> callee_saved_registers(Arch arch);
// The general registers (RegisterInfo::general) in DWARF order: what a debugger plugin reads
// from a frame to start a walk (LLDB: by lldb_name).
std::span<const RegisterInfo> general_registers(Arch arch);

}  // namespace unwindkit
