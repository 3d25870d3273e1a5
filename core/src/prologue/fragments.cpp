// The jump index and a fragment's entries (fragments.h).
#include "unwindkit/prologue/fragments.h"

#include <elf.h>

#include <algorithm>
#include <optional>

#include "decoder.h"
#include "unwindkit/elf/constants.h"
#include "unwindkit/prologue/lower.h"

namespace unwindkit::prologue {

namespace {

// What the code after an instruction gets from it.
enum class Runs : uint8_t {
  On,       // it falls through into the next bytes
  Stops,    // it does not: a return, an unconditional jump, a trap, or a call whose return
            // address is not its own code (a call that does not return: a compiler's last
            // instruction before another function)
  Padding,  // a no-op: what runs on is what ran into it
};

Runs runs(Arch arch, const cs_insn& insn) {
  if (arch == Arch::X86_64) {
    if (detail::x86_64_never_falls_through(insn.id)) return Runs::Stops;
    switch (insn.id) {
      case X86_INS_CALL:
      case X86_INS_LCALL: return Runs::Stops;
      case X86_INS_NOP: return Runs::Padding;
      case X86_INS_XCHG: {  // xchg %ax,%ax: gas's two-byte padding
        const cs_x86& x = insn.detail->x86;
        return x.op_count == 2 && x.operands[0].type == X86_OP_REG &&
                       x.operands[1].type == X86_OP_REG && x.operands[0].reg == x.operands[1].reg
                   ? Runs::Padding
                   : Runs::On;
      }
      default: return Runs::On;
    }
  }
  switch (insn.id) {  // AArch64
    case ARM64_INS_RET:
    case ARM64_INS_BR:
    case ARM64_INS_BRK:
    case ARM64_INS_HLT:
    case ARM64_INS_BL:
    case ARM64_INS_BLR: return Runs::Stops;
    case ARM64_INS_B: {
      const arm64_cc cc = insn.detail->arm64.cc;
      return cc == ARM64_CC_INVALID || cc == ARM64_CC_AL ? Runs::Stops : Runs::On;
    }
    case ARM64_INS_NOP: return Runs::Padding;
    default: return Runs::On;
  }
}

// One stretch of code, [address, address + code.size()).
struct Code {
  uint64_t address;
  Bytes code;
};

std::vector<Code> code_of(const elf::ElfFile& file) {
  std::vector<Code> out;
  for (const elf::Section& s : file.sections())
    if ((s.flags & SHF_EXECINSTR) != 0 && s.type != elf::kSectionNoBits && !s.data.empty())
      out.push_back({s.addr, s.data});
  if (!out.empty()) return out;
  for (const elf::Segment& seg : file.segments())  // no section headers
    if (seg.type == elf::kSegmentLoad && (seg.flags & elf::kSegmentFlagExecute) != 0)
      if (const Bytes b = file.bytes_at_address(seg.vaddr, seg.filesz); !b.empty())
        out.push_back({seg.vaddr, b});
  return out;
}

}  // namespace

JumpIndex JumpIndex::build(const elf::ElfFile& file, Arch arch, std::span<const uint64_t> starts) {
  JumpIndex out;
  if (arch != Arch::X86_64 && arch != Arch::AArch64) return out;
  detail::Decoder* d = detail::Decoder::for_arch(arch);
  if (d == nullptr) return out;
  out.built_ = true;
  cs_insn* insn = d->insn();
  for (const Code& c : code_of(file)) {
    const uint64_t end = c.address + c.code.size();
    // The first start past the stretch's: the stretch's own start has no code before it.
    auto next = std::upper_bound(starts.begin(), starts.end(), c.address);
    const uint8_t* p = c.code.data();
    size_t left = c.code.size();
    uint64_t at = c.address;
    Runs last = Runs::Stops;  // of the last instruction not padding
    // Goes on decoding at the start `next` points at.
    auto restart = [&] {
      const uint64_t skip = *next - c.address;
      p = c.code.data() + skip;
      left = c.code.size() - skip;
      at = *next++;
      last = Runs::Stops;
    };
    while (left > 0) {
      if (next != starts.end() && *next <= at) {
        // A start reached: what ran into it, or bytes read across it (the pass was not in
        // step with the code), which may.
        if (*next < at || last != Runs::Stops) out.entered_.push_back(*next);
        restart();
        continue;
      }
      const uint64_t here = at;
      if (!cs_disasm_iter(d->handle(), &p, &left, &at, insn)) {
        // Not an instruction: nothing is known of what runs on into the next start.
        if (next == starts.end() || *next >= end) break;
        out.entered_.push_back(*next);
        restart();
        continue;
      }
      const bool call = detail::is_call(arch, *insn) || cs_insn_group(d->handle(), insn, CS_GRP_CALL);
      if (call || cs_insn_group(d->handle(), insn, CS_GRP_JUMP))
        if (const auto target = detail::direct_target(arch, *insn))
          out.jumps_.push_back({here, *target, call});
      if (const Runs r = runs(arch, *insn); r != Runs::Padding) last = r;
    }
    // The next stretch may start where this one ends.
    if (left == 0 && last != Runs::Stops && next != starts.end() && *next == end)
      out.entered_.push_back(*next);
  }
  std::sort(out.jumps_.begin(), out.jumps_.end(),
            [](const Jump& a, const Jump& b) { return a.to < b.to || (a.to == b.to && a.from < b.from); });
  std::sort(out.entered_.begin(), out.entered_.end());
  out.entered_.erase(std::unique(out.entered_.begin(), out.entered_.end()), out.entered_.end());
  return out;
}

std::vector<JumpIndex::Jump> JumpIndex::into(uint64_t start, uint64_t end) const {
  std::vector<Jump> out;
  auto it = std::lower_bound(jumps_.begin(), jumps_.end(), start,
                             [](const Jump& j, uint64_t v) { return j.to < v; });
  for (; it != jumps_.end() && it->to < end; ++it)
    if (it->from < start || it->from >= end) out.push_back(*it);
  return out;
}

bool JumpIndex::falls_into(uint64_t start) const {
  return std::binary_search(entered_.begin(), entered_.end(), start);
}

namespace {

// Whether the row over `at` computes the CFA as the jump's state has it.
bool same_cfa(std::span<const TableRow> rows, uint64_t at, const JumpState& s, Arch arch) {
  const TableRow* row = nullptr;
  for (const TableRow& r : rows)
    if (r.start <= at && at < r.end && (row == nullptr || r.start >= row->start)) row = &r;
  if (row == nullptr || row->rule.outermost() || row->rule.cfa.kind != CfaRule::Kind::RegOffset)
    return false;
  const ArchInfo& info = arch_info(arch);
  if (row->rule.cfa.reg == info.sp) return s.cfa_minus_sp == row->rule.cfa.offset;
  if (row->rule.cfa.reg == info.fp) return s.cfa_minus_fp == row->rule.cfa.offset;
  return false;
}

}  // namespace

FragmentEntries entries_of(const JumpIndex& jumps, uint64_t start, uint64_t end,
                           std::span<const TableRow> rows, const AnalysisOf& analysis_of) {
  FragmentEntries out;
  auto miss = [&](FragmentMiss m) {
    out.entries.clear();
    out.miss = m;
    return out;
  };
  if (!jumps.built()) return miss(FragmentMiss::NoIndex);
  const std::vector<JumpIndex::Jump> in = jumps.into(start, end);
  if (in.empty()) return miss(FragmentMiss::NotEntered);
  out.source = in.front().from;
  if (std::any_of(in.begin(), in.end(), [](const JumpIndex::Jump& j) { return j.call; }))
    return miss(FragmentMiss::Called);
  if (jumps.falls_into(start)) return miss(FragmentMiss::FallsInto);
  if (rows.empty()) return miss(FragmentMiss::CfaDisagrees);
  const Analysis* source = nullptr;
  for (const JumpIndex::Jump& j : in) {
    const Analysis* a = analysis_of(j.from);
    if (a == nullptr || (source != nullptr && a != source)) return miss(FragmentMiss::SeveralFunctions);
    source = a;
  }
  std::optional<JumpState> common;
  for (const JumpIndex::Jump& j : in) {
    auto exit = std::lower_bound(source->exits.begin(), source->exits.end(), j.from,
                                 [](const Exit& e, uint64_t v) { return e.from < v; });
    if (exit == source->exits.end() || exit->from != j.from || exit->to != j.to)
      return miss(FragmentMiss::SourceUnproven);
    if (common && *common != exit->state) return miss(FragmentMiss::StatesDisagree);
    common = exit->state;
    if (!same_cfa(rows, j.to, exit->state, rows.front().rule.arch))
      return miss(FragmentMiss::CfaDisagrees);
    out.entries.push_back({j.to, exit->state});
  }
  if (common->saved.empty() && common->unchanged.empty()) return miss(FragmentMiss::SourceUnproven);
  // A jump table's targets are not seen: any of the function's indirect jumps may enter.
  for (const Exit& e : source->exits)
    if (!e.to && e.state != *common) return miss(FragmentMiss::StatesDisagree);
  return out;
}

Analysis analyze_entered(Analysis called, const elf::ElfFile& file, uint64_t start, uint64_t end,
                         std::span<const TableRow> rows,
                         const std::function<const JumpIndex&()>& jumps,
                         const AnalysisOf& analysis_of, FragmentMiss* miss) {
  if (miss != nullptr) *miss = FragmentMiss::None;
  if (!may_be_fragment(called) || rows.empty()) return called;
  FragmentEntries found = entries_of(jumps(), start, end, rows, analysis_of);
  if (miss != nullptr) *miss = found.miss;
  if (found.miss != FragmentMiss::None) return called;
  return analyze_function(file, rows.front().rule.arch, start, end, rows, found.entries);
}

}  // namespace unwindkit::prologue
