// GDB's names for the registers the core names by DWARF number, per architecture, and which
// registers a frame's unwind needs read from GDB.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/rules.h"

namespace unwindkit::gdb {

// From gdb.Architecture.name(): "i386:x86-64", "aarch64", "s390:64-bit"; nullopt for others.
std::optional<Arch> arch_from_gdb_name(std::string_view gdb_arch);
// GDB's register name for a DWARF register number ("rbp", "x29", "sp").
std::string gdb_register_name(Arch arch, uint16_t dwarf_reg);
// GDB's name of the program counter ("rip", "pc").
std::string_view gdb_pc_name(Arch arch);
// The registers the stepper may need from a frame besides the PC: SP, FP and, where the
// return address can live in a register (AArch64 and s390x leaf functions), that register;
// on s390x the FPRs too (an s390x leaf may keep its RA or FP in one).
std::vector<uint16_t> unwind_input_registers(Arch arch);
// The callee-saved registers the unwinder hands back unchanged when a rule leaves them alone
// (otherwise GDB shows them as <not saved> in callers).
std::vector<uint16_t> gdb_passed_through_registers(Arch arch);

}  // namespace unwindkit::gdb
