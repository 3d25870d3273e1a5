// lookup(): the FDE covering a PC (binary search when the section says SORTED), the FRE
// covering it, lowered into the shared rule model.
#include <algorithm>

#include "read.h"
#include "unwindkit/sframe/row.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::sframe {

namespace {

bool covers(const Fde& fde, uint64_t pc) {
  return pc >= fde.func_start && pc - fde.func_start < fde.size;
}

std::optional<size_t> find_fde(const Section& s, uint64_t pc) {
  if (s.header.sorted()) {
    auto it = std::upper_bound(s.fdes.begin(), s.fdes.end(), pc,
                               [](uint64_t v, const Fde& f) { return v < f.func_start; });
    if (it == s.fdes.begin()) return std::nullopt;
    --it;
    if (covers(*it, pc)) return static_cast<size_t>(it - s.fdes.begin());
    return std::nullopt;
  }
  for (size_t i = 0; i < s.fdes.size(); ++i)
    if (covers(s.fdes[i], pc)) return i;
  return std::nullopt;
}

// The last FRE starting at or before `offset`; FRE starts increase inside a function.
std::optional<size_t> find_fre(const Fde& fde, uint64_t offset) {
  auto it = std::upper_bound(fde.fres.begin(), fde.fres.end(), offset,
                             [](uint64_t v, const Fre& f) { return v < f.start_offset; });
  if (it == fde.fres.begin()) return std::nullopt;
  return static_cast<size_t>(it - fde.fres.begin()) - 1;
}

RegRule lower_slot(const Slot& slot, RegRule when_absent) {
  switch (slot.kind) {
    case Slot::Kind::Fixed:
    case Slot::Kind::AtCfa: return RegRule::at_cfa(slot.offset);
    case Slot::Kind::InReg: return RegRule::in_reg(slot.reg, slot.offset);
    case Slot::Kind::AtReg: return RegRule::at_reg(slot.reg, slot.offset);
    case Slot::Kind::Absent:
    case Slot::Kind::Padding: break;
  }
  return when_absent;
}

}  // namespace

UnwindRule detail::lower_row(const Header& header, const Fde& fde, uint8_t fre_info,
                             const Row& row) {
  const ArchInfo& regs = abi_regs(header.abi_arch);
  const bool aarch64 =
      header.abi_arch == kAbiAArch64Big || header.abi_arch == kAbiAArch64Little;
  UnwindRule rule;
  rule.arch = regs.arch;
  rule.source = Source::SFrame;
  rule.func_start = fde.func_start;
  rule.func_end = fde.func_end();
  rule.signal_frame = fde.signal(header.version);
  rule.sp_from_cfa = regs.sp_from_cfa;
  if (row.ra_undefined) {
    rule.cfa = {CfaRule::Kind::RegOffset, regs.sp, 0};
    rule.ra = RegRule::undefined();
    return rule;
  }
  rule.cfa = {row.cfa.kind == Slot::Kind::AtReg ? CfaRule::Kind::DerefRegOffset
                                                : CfaRule::Kind::RegOffset,
              row.cfa.reg, row.cfa.offset};
  // Not described: the RA is at the fixed offset if the ABI has one, else still in the link
  // register (an AArch64/s390x leaf); the FP is untouched.
  const RegRule ra_default = header.cfa_fixed_ra_offset != kFixedOffsetNone
                                 ? RegRule::at_cfa(header.cfa_fixed_ra_offset)
                                 : RegRule::in_reg(regs.ra);
  const RegRule fp_default = header.cfa_fixed_fp_offset != kFixedOffsetNone
                                 ? RegRule::at_cfa(header.cfa_fixed_fp_offset)
                                 : RegRule::unchanged();
  rule.ra = lower_slot(row.ra, ra_default);
  rule.fp = lower_slot(row.fp, fp_default);
  rule.ra_mangled = (fre_info & kFreInfoRaMangled & header.info().known_fre_info) != 0;
  rule.pauth_key = aarch64 && fde.pauth_key_b() ? PauthKey::B : PauthKey::A;
  return rule;
}

Result<std::optional<UnwindRule>> lookup(const Section& section, uint64_t pc) {
  const auto fde_index = find_fde(section, pc);
  if (!fde_index) return std::optional<UnwindRule>();
  const Fde& fde = section.fdes[*fde_index];
  uint64_t offset = pc - fde.func_start;
  if (fde.pcmask()) {
    // PCMASK rows repeat every rep_size bytes from the function start (notes §1).
    const uint32_t rep = section.rep_size(fde);
    if (rep == 0) return std::optional<UnwindRule>();
    offset %= rep;
  }
  const auto fre_index = find_fre(fde, offset);
  if (!fre_index) return std::optional<UnwindRule>();
  auto row = interpret(section, *fde_index, *fre_index);
  if (!row) return tl::unexpected(row.error());
  return std::optional<UnwindRule>(
      detail::lower_row(section.header, fde, fde.fres[*fre_index].info, *row));
}

}  // namespace unwindkit::sframe
