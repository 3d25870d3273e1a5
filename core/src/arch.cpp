// The one per-architecture register table (arch.h).
#include "unwindkit/arch.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace unwindkit {

namespace {

using R = RegisterInfo;
constexpr bool kSaved = true, kVolatile = false, kGeneral = true, kOther = false;

// x86_64 psABI: rbx, rbp and r12-r15 are callee-saved; rip is the return-address column.
constexpr std::array<R, 17> kX86_64 = {{
    {0, "rax", "rax", "rax", kVolatile, kGeneral},
    {1, "rdx", "rdx", "rdx", kVolatile, kGeneral},
    {2, "rcx", "rcx", "rcx", kVolatile, kGeneral},
    {3, "rbx", "rbx", "rbx", kSaved, kGeneral},
    {4, "rsi", "rsi", "rsi", kVolatile, kGeneral},
    {5, "rdi", "rdi", "rdi", kVolatile, kGeneral},
    {6, "rbp", "rbp", "rbp", kSaved, kGeneral},
    {7, "rsp", "rsp", "rsp", kVolatile, kGeneral},
    {8, "r8", "r8", "r8", kVolatile, kGeneral},
    {9, "r9", "r9", "r9", kVolatile, kGeneral},
    {10, "r10", "r10", "r10", kVolatile, kGeneral},
    {11, "r11", "r11", "r11", kVolatile, kGeneral},
    {12, "r12", "r12", "r12", kSaved, kGeneral},
    {13, "r13", "r13", "r13", kSaved, kGeneral},
    {14, "r14", "r14", "r14", kSaved, kGeneral},
    {15, "r15", "r15", "r15", kSaved, kGeneral},
    {16, "rip", "rip", "rip", kVolatile, kGeneral},
}};

// i386 psABI: ebx, ebp, esi and edi are callee-saved.
constexpr std::array<R, 9> kI386 = {{
    {0, "eax", "eax", "eax", kVolatile, kGeneral},
    {1, "ecx", "ecx", "ecx", kVolatile, kGeneral},
    {2, "edx", "edx", "edx", kVolatile, kGeneral},
    {3, "ebx", "ebx", "ebx", kSaved, kGeneral},
    {4, "esp", "esp", "esp", kVolatile, kGeneral},
    {5, "ebp", "ebp", "ebp", kSaved, kGeneral},
    {6, "esi", "esi", "esi", kSaved, kGeneral},
    {7, "edi", "edi", "edi", kSaved, kGeneral},
    {8, "eip", "eip", "eip", kVolatile, kGeneral},
}};

// AAPCS64: x19-x29 and the low 64 bits of v8-v15 (d8-d15) are callee-saved. GDB calls x29
// and x30 by their numbers, LLDB by their roles (fp, lr), as we do. The vector registers
// are named as their d halves, the part the ABI preserves; GDB's d<n> are pseudo-registers
// (handing back the raw v<n> from a Python unwinder corrupts the caller's pc and sp).
constexpr std::array<R, 65> kAArch64 = {{
    {0, "x0", "x0", "x0", kVolatile, kGeneral},
    {1, "x1", "x1", "x1", kVolatile, kGeneral},
    {2, "x2", "x2", "x2", kVolatile, kGeneral},
    {3, "x3", "x3", "x3", kVolatile, kGeneral},
    {4, "x4", "x4", "x4", kVolatile, kGeneral},
    {5, "x5", "x5", "x5", kVolatile, kGeneral},
    {6, "x6", "x6", "x6", kVolatile, kGeneral},
    {7, "x7", "x7", "x7", kVolatile, kGeneral},
    {8, "x8", "x8", "x8", kVolatile, kGeneral},
    {9, "x9", "x9", "x9", kVolatile, kGeneral},
    {10, "x10", "x10", "x10", kVolatile, kGeneral},
    {11, "x11", "x11", "x11", kVolatile, kGeneral},
    {12, "x12", "x12", "x12", kVolatile, kGeneral},
    {13, "x13", "x13", "x13", kVolatile, kGeneral},
    {14, "x14", "x14", "x14", kVolatile, kGeneral},
    {15, "x15", "x15", "x15", kVolatile, kGeneral},
    {16, "x16", "x16", "x16", kVolatile, kGeneral},
    {17, "x17", "x17", "x17", kVolatile, kGeneral},
    {18, "x18", "x18", "x18", kVolatile, kGeneral},
    {19, "x19", "x19", "x19", kSaved, kGeneral},
    {20, "x20", "x20", "x20", kSaved, kGeneral},
    {21, "x21", "x21", "x21", kSaved, kGeneral},
    {22, "x22", "x22", "x22", kSaved, kGeneral},
    {23, "x23", "x23", "x23", kSaved, kGeneral},
    {24, "x24", "x24", "x24", kSaved, kGeneral},
    {25, "x25", "x25", "x25", kSaved, kGeneral},
    {26, "x26", "x26", "x26", kSaved, kGeneral},
    {27, "x27", "x27", "x27", kSaved, kGeneral},
    {28, "x28", "x28", "x28", kSaved, kGeneral},
    {29, "fp", "x29", "fp", kSaved, kGeneral},
    {30, "lr", "x30", "lr", kVolatile, kGeneral},
    {31, "sp", "sp", "sp", kVolatile, kGeneral},
    {32, "pc", "pc", "pc", kVolatile, kGeneral},
    {64, "d0", "d0", "d0", kVolatile, kOther},
    {65, "d1", "d1", "d1", kVolatile, kOther},
    {66, "d2", "d2", "d2", kVolatile, kOther},
    {67, "d3", "d3", "d3", kVolatile, kOther},
    {68, "d4", "d4", "d4", kVolatile, kOther},
    {69, "d5", "d5", "d5", kVolatile, kOther},
    {70, "d6", "d6", "d6", kVolatile, kOther},
    {71, "d7", "d7", "d7", kVolatile, kOther},
    {72, "d8", "d8", "d8", kSaved, kOther},
    {73, "d9", "d9", "d9", kSaved, kOther},
    {74, "d10", "d10", "d10", kSaved, kOther},
    {75, "d11", "d11", "d11", kSaved, kOther},
    {76, "d12", "d12", "d12", kSaved, kOther},
    {77, "d13", "d13", "d13", kSaved, kOther},
    {78, "d14", "d14", "d14", kSaved, kOther},
    {79, "d15", "d15", "d15", kSaved, kOther},
    {80, "d16", "d16", "d16", kVolatile, kOther},
    {81, "d17", "d17", "d17", kVolatile, kOther},
    {82, "d18", "d18", "d18", kVolatile, kOther},
    {83, "d19", "d19", "d19", kVolatile, kOther},
    {84, "d20", "d20", "d20", kVolatile, kOther},
    {85, "d21", "d21", "d21", kVolatile, kOther},
    {86, "d22", "d22", "d22", kVolatile, kOther},
    {87, "d23", "d23", "d23", kVolatile, kOther},
    {88, "d24", "d24", "d24", kVolatile, kOther},
    {89, "d25", "d25", "d25", kVolatile, kOther},
    {90, "d26", "d26", "d26", kVolatile, kOther},
    {91, "d27", "d27", "d27", kVolatile, kOther},
    {92, "d28", "d28", "d28", kVolatile, kOther},
    {93, "d29", "d29", "d29", kVolatile, kOther},
    {94, "d30", "d30", "d30", kVolatile, kOther},
    {95, "d31", "d31", "d31", kVolatile, kOther},
}};

// s390x ELF ABI: r6-r13 and f8-f15 are callee-saved; r14 holds the return address and r11
// is the frame pointer. The floating-point registers are numbered in pairs (f0 f2 f4 f6 f1
// ...), as the ABI supplement's DWARF mapping lists them.
constexpr std::array<R, 32> kS390x = {{
    {0, "r0", "r0", "r0", kVolatile, kGeneral},
    {1, "r1", "r1", "r1", kVolatile, kGeneral},
    {2, "r2", "r2", "r2", kVolatile, kGeneral},
    {3, "r3", "r3", "r3", kVolatile, kGeneral},
    {4, "r4", "r4", "r4", kVolatile, kGeneral},
    {5, "r5", "r5", "r5", kVolatile, kGeneral},
    {6, "r6", "r6", "r6", kSaved, kGeneral},
    {7, "r7", "r7", "r7", kSaved, kGeneral},
    {8, "r8", "r8", "r8", kSaved, kGeneral},
    {9, "r9", "r9", "r9", kSaved, kGeneral},
    {10, "r10", "r10", "r10", kSaved, kGeneral},
    {11, "r11", "r11", "r11", kSaved, kGeneral},
    {12, "r12", "r12", "r12", kSaved, kGeneral},
    {13, "r13", "r13", "r13", kSaved, kGeneral},
    {14, "r14", "r14", "r14", kVolatile, kGeneral},
    {15, "r15", "r15", "r15", kVolatile, kGeneral},
    {16, "f0", "f0", "f0", kVolatile, kOther},
    {17, "f2", "f2", "f2", kVolatile, kOther},
    {18, "f4", "f4", "f4", kVolatile, kOther},
    {19, "f6", "f6", "f6", kVolatile, kOther},
    {20, "f1", "f1", "f1", kVolatile, kOther},
    {21, "f3", "f3", "f3", kVolatile, kOther},
    {22, "f5", "f5", "f5", kVolatile, kOther},
    {23, "f7", "f7", "f7", kVolatile, kOther},
    {24, "f8", "f8", "f8", kSaved, kOther},
    {25, "f10", "f10", "f10", kSaved, kOther},
    {26, "f12", "f12", "f12", kSaved, kOther},
    {27, "f14", "f14", "f14", kSaved, kOther},
    {28, "f9", "f9", "f9", kSaved, kOther},
    {29, "f11", "f11", "f11", kSaved, kOther},
    {30, "f13", "f13", "f13", kSaved, kOther},
    {31, "f15", "f15", "f15", kSaved, kOther},
}};

constexpr std::array<ArchInfo, 4> kArchs = {{
    {Arch::X86_64, "x86_64", 8, reg::x86_64::rsp, reg::x86_64::rbp, reg::x86_64::rip, false, 0,
     reg::x86_64::rip, "rip", "rip", kX86_64},
    {Arch::AArch64, "aarch64", 8, reg::aarch64::sp, reg::aarch64::x29, reg::aarch64::x30, true,
     0, reg::aarch64::pc, "pc", "pc", kAArch64},
    // GDB's s390 PC is its "pc" pseudo-register (tdep->pc_regnum, made from pswa): a Python
    // unwinder that saves pswa alone leaves the caller's PC <not saved>.
    {Arch::S390x, "s390x", 8, reg::s390x::r15, reg::s390x::r11, reg::s390x::r14, true, -160,
     std::nullopt, "pc", "pswa", kS390x},
    {Arch::I386, "i386", 4, reg::i386::esp, reg::i386::ebp, reg::i386::eip, false, 0,
     reg::i386::eip, "eip", "eip", kI386},
}};
// arch_info() indexes the table by the enum's value.
static_assert(kArchs[static_cast<size_t>(Arch::X86_64)].arch == Arch::X86_64 &&
              kArchs[static_cast<size_t>(Arch::AArch64)].arch == Arch::AArch64 &&
              kArchs[static_cast<size_t>(Arch::S390x)].arch == Arch::S390x &&
              kArchs[static_cast<size_t>(Arch::I386)].arch == Arch::I386);

// The DWARF numbers of a table's callee-saved registers, worked out when compiling.
template <const auto& kTable>
constexpr auto callee_saved_of() {
  constexpr auto n = static_cast<size_t>(
      std::count_if(kTable.begin(), kTable.end(), [](const R& r) { return r.callee_saved; }));
  std::array<uint16_t, n> out{};
  size_t i = 0;
  for (const R& r : kTable)
    if (r.callee_saved) out[i++] = r.dwarf;
  return out;
}
constexpr auto kX86_64Saved = callee_saved_of<kX86_64>();
constexpr auto kAArch64Saved = callee_saved_of<kAArch64>();
constexpr auto kS390xSaved = callee_saved_of<kS390x>();
constexpr auto kI386Saved = callee_saved_of<kI386>();

}  // namespace

const ArchInfo& arch_info(Arch arch) {
  const auto i = static_cast<size_t>(arch);
  return i < kArchs.size() ? kArchs[i] : kArchs[0];
}

std::string_view arch_name(Arch arch) { return arch_info(arch).name; }

unsigned arch_word_size(Arch arch) { return arch_info(arch).word_size; }

const RegisterInfo* register_info(Arch arch, uint16_t dwarf_reg) {
  for (const RegisterInfo& r : arch_info(arch).registers)
    if (r.dwarf == dwarf_reg) return &r;
  return nullptr;
}

std::string reg_name(Arch arch, uint16_t dwarf_reg) {
  if (const RegisterInfo* r = register_info(arch, dwarf_reg)) return std::string(r->name);
  return fmt::format("r{}", dwarf_reg);
}

std::span<const uint16_t> callee_saved_registers(Arch arch) {
  switch (arch) {
    case Arch::X86_64: return kX86_64Saved;
    case Arch::AArch64: return kAArch64Saved;
    case Arch::S390x: return kS390xSaved;
    case Arch::I386: return kI386Saved;
  }
  return {};
}

std::span<const RegisterInfo> general_registers(Arch arch) {
  const auto all = arch_info(arch).registers;
  size_t n = 0;
  while (n < all.size() && all[n].general) ++n;
  return all.first(n);
}

}  // namespace unwindkit
