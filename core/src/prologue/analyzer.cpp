// The analyzer's one linear pass: decode each instruction, check the frame model against the
// table's row at every row boundary and block start, apply the instruction, and record where
// the claims change. See analyzer.h.
#include "unwindkit/prologue/analyzer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "decoder.h"
#include "frame_model.h"
#include "instructions.h"

namespace unwindkit::prologue {

const Region* Analysis::at(uint64_t pc) const {
  auto it = std::upper_bound(regions.begin(), regions.end(), pc,
                             [](uint64_t v, const Region& r) { return v < r.start; });
  if (it == regions.begin()) return nullptr;
  --it;
  return pc < it->end ? &*it : nullptr;
}

namespace detail {

void write_all(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  cs_regs read, written;
  uint8_t read_count = 0, write_count = 0;
  if (cs_regs_access(d.handle(), &insn, read, &read_count, written, &write_count) != CS_ERR_OK)
    return;
  const ArchInfo& info = arch_info(m.arch());
  for (uint8_t i = 0; i < write_count; ++i) {
    const auto reg = d.dwarf(written[i]);
    if (!reg) continue;
    if (*reg == info.sp) m.set_sp(std::nullopt);
    if (*reg == info.fp) m.set_fp(std::nullopt);
    m.write(*reg);
  }
}

namespace {

using Kind = RegState::Kind;
// A row's CFA as (base register, CFA - base): the key of the frame states seen at it.
using CfaKey = std::pair<uint16_t, int64_t>;

std::optional<CfaKey> key_of(const TableRow* row, const ArchInfo& info) {
  if (row == nullptr || row->rule.outermost() || row->rule.cfa.kind != CfaRule::Kind::RegOffset)
    return std::nullopt;
  if (row->rule.cfa.reg != info.sp && row->rule.cfa.reg != info.fp) return std::nullopt;
  return CfaKey{row->rule.cfa.reg, row->rule.cfa.offset};
}

bool matches(const FrameModel& m, const std::optional<CfaKey>& key, const ArchInfo& info) {
  if (!key) return false;
  const auto have = key->first == info.sp ? m.sp() : m.fp();
  return have == key->second;
}

// What is claimed from one instruction on, until the next draft.
struct Draft {
  uint64_t start = 0;
  bool lost = false;
  std::array<RegState, kMaxCalleeSaved> regs{};
};

Flow apply(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  switch (m.arch()) {
    case Arch::X86_64: return apply_x86_64(m, d, insn);
    case Arch::AArch64: return apply_aarch64(m, d, insn);
    default: return apply_s390x(m, d, insn);
  }
}

class Pass {
 public:
  Pass(Arch arch, uint64_t func_start, uint64_t func_end)
      : m_(arch), info_(arch_info(arch)), func_start_(func_start), func_end_(func_end) {}

  Analysis run(Decoder& d, Bytes code, std::span<const TableRow> table);

 private:
  void lose(uint64_t at, std::string message) {
    if (stopped_) return;
    stopped_ = Error{".text", at - func_start_, "instruction", std::move(message),
                     ErrorKind::Unsupported};
  }
  // A block after a ret or jump: the frame is the one last seen under this row's CFA, less
  // what the linear path had changed since (a register the CFI may still name).
  void start_block(uint64_t at, const std::optional<CfaKey>& key);
  void draft(uint64_t at);
  Analysis finish() const;

  FrameModel m_;
  const ArchInfo& info_;
  uint64_t func_start_, func_end_;
  std::map<CfaKey, FrameState> seen_;
  std::vector<Draft> drafts_;
  std::optional<Error> stopped_;
};

void Pass::start_block(uint64_t at, const std::optional<CfaKey>& key) {
  const auto it = key ? seen_.find(*key) : seen_.end();
  if (it == seen_.end()) {
    lose(at, fmt::format("block at {:#x} starts in a frame state the code never reached", at));
    return;
  }
  FrameState s = it->second;
  const FrameState& before = m_.state();
  for (size_t i = 0; i < s.regs.size(); ++i)
    if (before.regs[i].kind != Kind::Caller && s.regs[i].kind == Kind::Caller)
      s.regs[i].kind = Kind::Unknown;
  m_.set_state(s);
  m_.leave_epilogue();
}

void Pass::draft(uint64_t at) {
  Draft d{at, stopped_.has_value(), m_.state().regs};
  if (d.lost) d.regs = {};
  if (!drafts_.empty() && drafts_.back().lost == d.lost && drafts_.back().regs == d.regs) return;
  drafts_.push_back(d);
}

Analysis Pass::run(Decoder& d, Bytes code, std::span<const TableRow> table) {
  std::vector<const TableRow*> rows;
  for (const TableRow& r : table)
    if (r.start < r.end && r.start >= func_start_ && r.start < func_end_) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TableRow* a, const TableRow* b) { return a->start < b->start; });

  const uint8_t* p = code.data();
  size_t left = code.size();
  uint64_t address = func_start_;
  size_t next_row = 0;
  const TableRow* row = nullptr;
  Flow previous = Flow::Next;
  cs_insn* insn = d.insn();
  while (left > 0) {
    const uint64_t at = address;
    if (!cs_disasm_iter(d.handle(), &p, &left, &address, insn)) {
      lose(at, fmt::format("no instruction decodes at {:#x}", at));
      draft(at);
      break;
    }
    bool boundary = false;
    while (next_row < rows.size() && rows[next_row]->start <= at) {
      if (rows[next_row]->start < at)
        lose(at, fmt::format("row at {:#x} starts inside an instruction", rows[next_row]->start));
      row = rows[next_row++];
      boundary = true;
    }
    const auto key = key_of(row, info_);
    if (!stopped_) {
      if (previous == Flow::Terminal ||
          (previous == Flow::Call && boundary && !matches(m_, key, info_)))
        start_block(at, key);
      else if (boundary && !matches(m_, key, info_))
        lose(at, fmt::format("the code's frame at {:#x} is not the row's", at));
    }
    draft(at);
    if (stopped_) break;  // nothing is claimed from here on
    if (key && !m_.in_epilogue()) seen_.insert_or_assign(*key, m_.state());
    if (const Flow flow = apply(m_, d, *insn); flow != Flow::Padding) previous = flow;
  }
  return finish();
}

Analysis Pass::finish() const {
  Analysis out;
  out.stopped = stopped_;
  out.fully_explained = !stopped_;
  const auto saved = m_.callee_saved();
  for (size_t k = 0; k < drafts_.size(); ++k) {
    const Draft& d = drafts_[k];
    Region region;
    region.start = d.start;
    region.end = k + 1 < drafts_.size() ? drafts_[k + 1].start : func_end_;
    bool unknown = d.lost;
    for (size_t i = 0; i < saved.size(); ++i) {
      const RegState& r = d.regs[i];
      if (r.kind == Kind::Saved || r.kind == Kind::Restored)
        region.saved.push_back({saved[i], RegRule::at_cfa(r.slot)});
      else if (r.kind == Kind::Unknown || (m_.tainted() >> i & 1u) != 0)
        unknown = true;
    }
    region.others_unchanged = out.fully_explained && !unknown;
    if (!out.regions.empty() && out.regions.back().saved == region.saved &&
        out.regions.back().others_unchanged == region.others_unchanged) {
      out.regions.back().end = region.end;
      continue;
    }
    out.regions.push_back(std::move(region));
  }
  return out;
}

}  // namespace
}  // namespace detail

Analysis analyze(Arch arch, Bytes code, uint64_t func_start, std::span<const TableRow> rows) {
  if (code.empty() || code.size() > UINT64_MAX - func_start) return {};
  detail::Decoder* decoder = detail::Decoder::for_arch(arch);
  if (decoder == nullptr) {
    Analysis out;
    out.regions.push_back({func_start, func_start + code.size(), {}, false});
    out.stopped = Error{".text", 0, "architecture",
                        fmt::format("no prologue analysis for {}", arch_name(arch)),
                        ErrorKind::Unsupported};
    return out;
  }
  return detail::Pass(arch, func_start, func_start + code.size()).run(*decoder, code, rows);
}

}  // namespace unwindkit::prologue
