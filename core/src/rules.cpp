#include "unwindkit/rules.h"

#include <fmt/format.h>

#include <algorithm>

namespace unwindkit {

std::string_view source_name(Source source) {
  switch (source) {
    case Source::Cfi: return "cfi";
    case Source::SFrame: return "sframe";
    case Source::CompactUnwind: return "compact-unwind";
    case Source::FramePointer: return "fp";
    case Source::EntryPoint: return "entry";
  }
  return "unknown";
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

std::vector<uint16_t> carried_registers(const UnwindRule& rule) {
  const ArchInfo& arch = arch_info(rule.arch);
  std::vector<uint16_t> out;
  for (uint16_t r : callee_saved_registers(rule.arch)) {
    const bool named = r == arch.fp || std::any_of(rule.saved.begin(), rule.saved.end(),
                                                   [r](const SavedReg& s) { return s.reg == r; });
    if (r == arch.fp ? rule.fp.kind == RegRule::Kind::Unchanged
                     : !named && rule.unlisted == Unlisted::Unchanged)
      out.push_back(r);
  }
  return out;
}

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
