#include "gdb_registers.h"

#include <array>

#include <fmt/format.h>

#include "unwindkit/stepper.h"

namespace unwindkit::gdb {

std::optional<Arch> arch_from_gdb_name(std::string_view gdb_arch) {
  if (gdb_arch == "i386:x86-64") return Arch::X86_64;
  if (gdb_arch == "aarch64") return Arch::AArch64;
  return std::nullopt;
}

std::string gdb_register_name(Arch arch, uint16_t dwarf_reg) {
  if (arch == Arch::AArch64) {
    if (dwarf_reg == reg::aarch64::sp) return "sp";
    if (dwarf_reg == reg::aarch64::pc) return "pc";
    if (dwarf_reg <= reg::aarch64::x30) return fmt::format("x{}", dwarf_reg);
  }
  return reg_name(arch, dwarf_reg);
}

std::string_view gdb_pc_name(Arch arch) { return arch == Arch::X86_64 ? "rip" : "pc"; }

std::span<const uint16_t> unwind_input_registers(Arch arch) {
  static constexpr std::array<uint16_t, 2> x86_64 = {reg::x86_64::rsp, reg::x86_64::rbp};
  static constexpr std::array<uint16_t, 3> aarch64 = {reg::aarch64::sp, reg::aarch64::x29,
                                                      reg::aarch64::x30};
  if (arch == Arch::AArch64) return aarch64;
  return x86_64;
}

std::vector<uint16_t> gdb_passed_through_registers(Arch arch) {
  std::vector<uint16_t> regs;
  for (uint16_t r : callee_saved_registers(arch)) {
    // AArch64 d8..d15: GDB's d<n> are pseudo-registers, and handing back the raw v<n> from
    // a GDB 13 Python unwinder corrupts the caller's pc and sp (seen on the fixture core).
    if (arch == Arch::AArch64 && r >= reg::aarch64::v0) continue;
    regs.push_back(r);
  }
  return regs;
}

}  // namespace unwindkit::gdb
