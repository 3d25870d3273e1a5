#include "gdb_registers.h"

#include "unwindkit/stepper.h"

namespace unwindkit::gdb {

namespace {
constexpr uint16_t kS390xFprs = 16;
}  // namespace

std::optional<Arch> arch_from_gdb_name(std::string_view gdb_arch) {
  if (gdb_arch == "i386:x86-64") return Arch::X86_64;
  if (gdb_arch == "aarch64") return Arch::AArch64;
  if (gdb_arch == "s390:64-bit") return Arch::S390x;
  return std::nullopt;
}

std::string gdb_register_name(Arch arch, uint16_t dwarf_reg) {
  if (const RegisterInfo* r = register_info(arch, dwarf_reg)) return std::string(r->gdb_name);
  return reg_name(arch, dwarf_reg);
}

std::string_view gdb_pc_name(Arch arch) { return arch_info(arch).gdb_pc_name; }

std::vector<uint16_t> unwind_input_registers(Arch arch) {
  const ArchInfo& info = arch_info(arch);
  std::vector<uint16_t> regs = {info.sp, info.fp};
  if (info.ra_in_register) regs.push_back(info.ra);
  // s390x SFrame v3 may keep the RA or FP of a leaf in an FPR (a flexible FDE's register
  // slot, f0-f15 as gcc saves them): the caller's CFA can be that FPR's value.
  if (arch == Arch::S390x)
    for (uint16_t r = reg::s390x::f0; r < reg::s390x::f0 + kS390xFprs; ++r) regs.push_back(r);
  return regs;
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
