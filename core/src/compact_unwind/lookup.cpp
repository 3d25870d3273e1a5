#include "unwindkit/compact_unwind/lookup.h"

#include <fmt/format.h>

#include <algorithm>

#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/encoding.h"

namespace unwindkit::compact_unwind {

Result<std::optional<Entry>> lookup(const UnwindInfo& info, uint64_t image_base, uint64_t pc) {
  if (pc < image_base || info.index.size() < 2) return std::nullopt;
  const uint64_t off = pc - image_base;
  if (off < info.index.front().function_offset || off >= info.index.back().function_offset)
    return std::nullopt;
  // The last index entry whose function offset is <= off; never the sentinel (checked above).
  const auto idx = std::upper_bound(info.index.begin(), info.index.end(), off,
                                    [](uint64_t o, const IndexEntry& e) {
                                      return o < e.function_offset;
                                    }) -
                   info.index.begin() - 1;
  const auto page = std::find_if(info.pages.begin(), info.pages.end(), [&](const Page& p) {
    return p.index == static_cast<uint32_t>(idx);
  });
  if (page == info.pages.end() || page->entries.empty()) return std::nullopt;
  // The last entry at or below off: of two entries at one address, the first is empty.
  const auto it = std::upper_bound(page->entries.begin(), page->entries.end(), off,
                                   [](uint64_t o, const PageEntry& e) {
                                     return o < e.function_offset;
                                   });
  if (it == page->entries.begin()) return std::nullopt;
  const PageEntry& e = *(it - 1);
  Entry out;
  out.function_start = image_base + e.function_offset;
  out.function_end = image_base + (it != page->entries.end()
                                       ? it->function_offset
                                       : info.index[static_cast<size_t>(idx) + 1].function_offset);
  out.encoding = e.encoding;
  const uint32_t pers = (e.encoding & kPersonalityMask) >> kPersonalityShift;
  if (pers != 0) {
    if (pers > info.personalities.size())
      return fail(kUnwindInfoSection, page->section_offset, "encoding",
                  fmt::format("{:#010x} names personality {} of {}", e.encoding, pers,
                              info.personalities.size()));
    out.personality = info.personalities[pers - 1];
  }
  if (e.encoding & kHasLsda) {
    const auto l = std::find_if(info.lsdas.begin(), info.lsdas.end(), [&](const LsdaEntry& x) {
      return x.function_offset == e.function_offset;
    });
    if (l == info.lsdas.end())
      return fail(kUnwindInfoSection, info.index.front().lsda_offset, "lsda",
                  fmt::format("no LSDA entry for function offset {:#x}", e.function_offset));
    out.lsda = l->lsda_offset;
  }
  return out;
}

namespace {

// Saved registers as CFA-relative rules; the frame pointer's own slot goes to rule.fp.
void add_saved(UnwindRule& rule, const DecodedEncoding& d, uint16_t fp_reg) {
  for (const SavedSlot& s : d.saved) {
    if (s.reg == fp_reg)
      rule.fp = RegRule::at_cfa(s.cfa_offset);
    else
      rule.saved.push_back({s.reg, RegRule::at_cfa(s.cfa_offset)});
  }
}

}  // namespace

Result<Lowered> lower(Arch arch, const Entry& entry, Bytes function_code) {
  auto d = decode_encoding(arch, entry.encoding);
  if (!d) return tl::unexpected(d.error());
  Lowered out;
  if (d->kind == Kind::None) return out;
  if (d->kind == Kind::Dwarf) {
    out.kind = Lowered::Kind::UseDwarf;
    out.dwarf_offset = d->dwarf_offset;
    return out;
  }
  out.kind = Lowered::Kind::Rule;
  UnwindRule& rule = out.rule;
  // An encoding lists every register the function saved (else the compiler emits DWARF mode).
  rule.unlisted = Unlisted::Unchanged;
  rule.arch = arch;
  rule.source = Source::CompactUnwind;
  rule.func_start = entry.function_start;
  rule.func_end = entry.function_end;
  const ArchInfo& regs = arch_info(arch);
  const auto w = static_cast<int64_t>(regs.word_size);
  const bool arm = arch == Arch::AArch64;
  const uint16_t sp = regs.sp;
  const uint16_t fp = regs.fp;
  switch (d->kind) {
    case Kind::FramePointer:
      // Return address and caller's fp sit just above the frame pointer on every arch.
      rule.cfa = {CfaRule::Kind::RegOffset, fp, 2 * w};
      rule.ra = RegRule::at_cfa(-w);
      rule.fp = RegRule::at_cfa(-2 * w);
      rule.ra_mangled = d->ra_mangled;
      break;
    case Kind::FramelessImmediate:
      rule.cfa = {CfaRule::Kind::RegOffset, sp, d->stack_size};
      // arm64 leaves the return address in lr (innermost frame only); x86 pushed it.
      rule.ra = arm ? RegRule::in_reg(regs.ra) : RegRule::at_cfa(-w);
      break;
    case Kind::FramelessIndirect: {
      ByteReader code(function_code, Endian::Little, "function code");
      auto imm = code.uint_at(d->stack_immediate_offset, 4, "sub $imm32 immediate");
      if (!imm) return tl::unexpected(imm.error());
      rule.cfa = {CfaRule::Kind::RegOffset, sp, static_cast<int64_t>(*imm) + d->stack_adjust};
      rule.ra = RegRule::at_cfa(-w);
      break;
    }
    case Kind::None:
    case Kind::Dwarf:
      break;  // handled above
  }
  add_saved(rule, *d, fp);
  return out;
}

}  // namespace unwindkit::compact_unwind
