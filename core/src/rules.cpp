#include "unwindkit/rules.h"

#include <fmt/format.h>

#include <array>

namespace unwindkit {

std::string_view arch_name(Arch arch) {
  switch (arch) {
    case Arch::X86_64: return "x86_64";
    case Arch::AArch64: return "aarch64";
    case Arch::S390x: return "s390x";
    case Arch::I386: return "i386";
  }
  return "unknown";
}

unsigned arch_word_size(Arch arch) { return arch == Arch::I386 ? 4 : 8; }

std::string_view source_name(Source source) {
  switch (source) {
    case Source::Cfi: return "cfi";
    case Source::SFrame: return "sframe";
    case Source::CompactUnwind: return "compact-unwind";
    case Source::FramePointer: return "fp";
  }
  return "unknown";
}

std::string reg_name(Arch arch, uint16_t r) {
  static constexpr std::array<const char*, 17> x64 = {
      "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
      "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};
  static constexpr std::array<const char*, 9> x86 = {"eax", "ecx", "edx", "ebx", "esp",
                                                     "ebp", "esi", "edi", "eip"};
  switch (arch) {
    case Arch::X86_64:
      if (r < x64.size()) return x64[r];
      break;
    case Arch::I386:
      if (r < x86.size()) return x86[r];
      break;
    case Arch::AArch64:
      if (r == reg::aarch64::x29) return "fp";
      if (r == reg::aarch64::x30) return "lr";
      if (r == reg::aarch64::sp) return "sp";
      if (r == reg::aarch64::pc) return "pc";
      if (r < 31) return fmt::format("x{}", r);
      if (r >= reg::aarch64::v0 && r < reg::aarch64::v0 + 32)
        return fmt::format("d{}", r - reg::aarch64::v0);
      break;
    case Arch::S390x:
      if (r < 16) return fmt::format("r{}", r);
      break;
  }
  return fmt::format("r{}", r);
}

namespace {

std::string offset_str(int64_t off) {
  if (off == 0) return "";
  return off < 0 ? fmt::format("-{}", -static_cast<uint64_t>(off)) : fmt::format("+{}", off);
}

std::string describe_reg(Arch arch, const RegRule& r) {
  switch (r.kind) {
    case RegRule::Kind::Unchanged: return "same";
    case RegRule::Kind::Undefined: return "undef";
    case RegRule::Kind::AtCfa: return fmt::format("[cfa{}]", offset_str(r.offset));
    case RegRule::Kind::ValCfa: return fmt::format("cfa{}", offset_str(r.offset));
    case RegRule::Kind::InReg: return fmt::format("{}{}", reg_name(arch, r.reg), offset_str(r.offset));
    case RegRule::Kind::AtReg:
      return fmt::format("[{}{}]", reg_name(arch, r.reg), offset_str(r.offset));
  }
  return "?";
}

}  // namespace

std::string describe(const UnwindRule& rule) {
  std::string cfa = fmt::format("{}{}", reg_name(rule.arch, rule.cfa.reg), offset_str(rule.cfa.offset));
  if (rule.cfa.kind == CfaRule::Kind::DerefRegOffset) cfa = "[" + cfa + "]";
  if (rule.outermost()) return fmt::format("cfa={} ra=undef (outermost)", cfa);
  std::string out = fmt::format("cfa={} ra={} fp={}", cfa, describe_reg(rule.arch, rule.ra),
                                describe_reg(rule.arch, rule.fp));
  for (const auto& s : rule.saved)
    out += fmt::format(" {}={}", reg_name(rule.arch, s.reg), describe_reg(rule.arch, s.rule));
  if (rule.ra_mangled)
    out += rule.pauth_key == PauthKey::B ? " ra-signed(B)" : " ra-signed(A)";
  if (rule.signal_frame) out += " signal";
  return out;
}

}  // namespace unwindkit
