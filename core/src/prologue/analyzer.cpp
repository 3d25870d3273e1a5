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

// A jump that stays in the function (a direct one to an address inside it, or an indirect
// one): its frame state reaches code here. A call, or a jump out (a tail call), is none.
bool jumps_within(const Decoder& d, const cs_insn& insn, uint64_t func_start, uint64_t func_end) {
  if (!is_jump(d, insn)) return false;
  const auto target = direct_target(d.arch(), insn);
  return !target || (*target >= func_start && *target < func_end);
}

// Whether the function has such a jump, from instructions decoded once (else: true, unread).
bool may_jump_within(const Decoder& d, const Instructions& code, uint64_t func_start,
                     uint64_t func_end) {
  if (!code.kept_whole()) return true;  // reading it costs what the walk it might save does
  Instructions::Walk walk = code.walk();
  uint64_t at = func_start;
  while (const cs_insn* insn = walk.next(at))
    if (jumps_within(d, *insn, func_start, func_end)) return true;
  return false;
}

bool is_padding(Arch arch, const cs_insn& insn) {
  switch (arch) {
    case Arch::X86_64: return insn.id == X86_INS_NOP || insn.id == X86_INS_INT3;
    case Arch::AArch64: return insn.id == ARM64_INS_NOP;
    default: return false;
  }
}

Flow apply(FrameModel& m, const Decoder& d, const cs_insn& insn) {
  switch (m.arch()) {
    case Arch::X86_64: return apply_x86_64(m, d, insn);
    case Arch::AArch64: return apply_aarch64(m, d, insn);
    default: return apply_s390x(m, d, insn);
  }
}

// Bounds the memory for hostile code (a state is a few hundred bytes): no compiled function
// has nearly as many jump targets.
constexpr size_t kMaxTargets = 1u << 16;

// The frame states jumps carry: the meet of the states at every jump instruction
// (conditional or not, direct or not) under each row's CFA, and at the direct ones to each
// address of the function.
struct JumpStates {
  std::map<CfaKey, FrameState> by_cfa;
  std::map<uint64_t, FrameState> by_target;
  bool operator==(const JumpStates&) const = default;
};

template <class Key>
void add(std::map<Key, FrameState>& states, const Key& key, const FrameState& s) {
  const auto [it, fresh] = states.try_emplace(key, s);
  if (!fresh) it->second = meet(it->second, s);
}

// The function's rows with an extent inside it, by start: what every walk checks against.
std::vector<const TableRow*> rows_within(std::span<const TableRow> table, uint64_t func_start,
                                         uint64_t func_end) {
  std::vector<const TableRow*> rows;
  for (const TableRow& r : table)
    if (r.start < r.end && r.start >= func_start && r.start < func_end) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TableRow* a, const TableRow* b) { return a->start < b->start; });
  return rows;
}

class Pass {
 public:
  // `drafts`: where the claims are drafted, emptied here (the thread's, reused by one walk
  // after another: a draft is a few hundred bytes, and growing a vector of them for each walk
  // of each function was a tenth of a large module's side file).
  Pass(Arch arch, uint64_t func_start, uint64_t func_end, std::vector<Draft>& drafts,
       std::span<const Entry> entries)
      : m_(arch), info_(arch_info(arch)), func_start_(func_start), func_end_(func_end),
        entered_by_jumps_(!entries.empty()), drafts_(drafts) {
    drafts_.clear();
    // The jumps from elsewhere are jumps the walks see from the start: every walk has them.
    for (const Entry& e : entries) {
      const FrameState s = state_of(e.state);
      if (s.sp) add(jumps_.by_cfa, CfaKey{info_.sp, *s.sp}, s);
      if (s.fp) add(jumps_.by_cfa, CfaKey{info_.fp, *s.fp}, s);
      add(jumps_.by_target, e.at, s);
    }
  }

  // One linear walk. Code that jumps reach starts from (after a ret or jump) or joins
  // (else) their state: the jumps to its address, or, for a block no direct jump reaches,
  // the jumps under its CFA; those `given` (a previous walk's), or without, those seen so
  // far. Only a walk with `given` drafts claims: only such a walk can be the last.
  void run(const Decoder& d, const Instructions& code, std::span<const TableRow* const> rows,
           const JumpStates* given);
  const JumpStates& jumps() const { return jumps_; }
  Analysis finish() const;

 private:
  void lose(uint64_t at, StopKind kind, std::string message) {
    if (stopped_) return;
    stopped_ = Error{".text", at - func_start_, "instruction", std::move(message),
                     ErrorKind::Unsupported};
    stop_kind_ = kind;
  }
  // A jump's state in the model's terms: a register neither saved nor unchanged is unknown.
  FrameState state_of(const JumpState& j) const;
  // The model's state before the instruction at `at` (the final drafts, withdrawals made),
  // with SP and FP as the walk saw them.
  JumpState jump_state(uint64_t at, std::optional<int64_t> sp, std::optional<int64_t> fp,
                       bool fully_explained) const;
  void start_block(uint64_t at, const std::optional<CfaKey>& key, const JumpStates& jumps);
  // The state with the key's register at its CFA distance (a meet may have lost it).
  FrameState at_key(FrameState s, const CfaKey& key) const {
    (key.first == info_.sp ? s.sp : s.fp) = key.second;
    return s;
  }
  // Claims from `at` on: the model's, or none.
  void draft(uint64_t at, bool nothing = false);
  // Register `i` claimed saved nowhere from `from` on (drafted already).
  void withdraw(size_t i, uint64_t from);

  FrameModel m_;
  const ArchInfo& info_;
  uint64_t func_start_, func_end_;
  bool entered_by_jumps_;  // entries were given: no call enters the function at its start
  bool final_ = false;  // the second walk: the jumps given are all there are
  JumpStates jumps_;
  std::vector<Draft>& drafts_;
  std::optional<Error> stopped_;
  StopKind stop_kind_ = StopKind::None;
  // The final walk's jumps out: where, to where, and SP and FP there.
  struct ExitSeen {
    uint64_t from;
    std::optional<uint64_t> to;
    std::optional<int64_t> sp, fp;
  };
  std::vector<ExitSeen> exits_;
};

FrameState Pass::state_of(const JumpState& j) const {
  FrameState s;
  s.sp = j.cfa_minus_sp;
  s.fp = j.cfa_minus_fp;
  const auto saved = m_.callee_saved();
  for (size_t i = 0; i < saved.size(); ++i) {
    const auto slot = std::find_if(j.saved.begin(), j.saved.end(),
                                   [&](const SavedReg& r) { return r.reg == saved[i]; });
    if (slot != j.saved.end())
      s.regs[i] = {Kind::Saved, slot->rule.offset};
    else if (std::binary_search(j.unchanged.begin(), j.unchanged.end(), saved[i]))
      s.regs[i] = {Kind::Caller, 0};
    else
      s.regs[i] = {Kind::Unknown, 0};
  }
  return s;
}

JumpState Pass::jump_state(uint64_t at, std::optional<int64_t> sp, std::optional<int64_t> fp,
                           bool fully_explained) const {
  JumpState out{sp, fp, {}, {}};
  auto it = std::upper_bound(drafts_.begin(), drafts_.end(), at,
                             [](uint64_t v, const Draft& d) { return v < d.start; });
  if (it == drafts_.begin() || std::prev(it)->lost) return out;
  const Draft& d = *std::prev(it);
  const auto saved = m_.callee_saved();
  for (size_t i = 0; i < saved.size(); ++i) {
    const RegState& r = d.regs[i];
    // As finish() claims them: a register written anywhere while it held the caller's value
    // is not claimed unchanged anywhere.
    if (r.kind == Kind::Saved)
      out.saved.push_back({saved[i], RegRule::at_cfa(r.slot)});
    else if (r.kind == Kind::Caller && fully_explained && (m_.tainted() >> i & 1u) == 0)
      out.unchanged.push_back(saved[i]);
  }
  std::sort(out.saved.begin(), out.saved.end(),
            [](const SavedReg& a, const SavedReg& b) { return a.reg < b.reg; });
  std::sort(out.unchanged.begin(), out.unchanged.end());
  return out;
}

void Pass::start_block(uint64_t at, const std::optional<CfaKey>& key, const JumpStates& jumps) {
  if (!key) {
    lose(at, StopKind::CfaNotSpOrFp,
         fmt::format("block at {:#x}: its row's CFA is not SP or FP based", at));
    return;
  }
  const auto direct = jumps.by_target.find(at);
  const auto under = jumps.by_cfa.find(*key);
  FrameState s;
  if (direct != jumps.by_target.end()) {
    s = direct->second;
  } else if (under != jumps.by_cfa.end()) {
    s = under->second;
  } else if (final_) {
    lose(at, StopKind::Unreached, fmt::format("block at {:#x}: no jump reaches its frame", at));
    return;
  } else {
    // An earlier walk goes on (its jumps further on are what the next one needs), knowing
    // nothing of the registers here.
    for (RegState& r : s.regs) r.kind = Kind::Unknown;
  }
  s = at_key(s, *key);
  // A register the linear path had saved or restored, which the jumps' state has as the
  // caller's: the CFI (linear too) may still name its slot here. Neither claim is safe.
  const FrameState& before = m_.state();
  for (size_t i = 0; i < s.regs.size(); ++i)
    if (before.regs[i].kind != Kind::Caller && s.regs[i].kind == Kind::Caller)
      s.regs[i].kind = Kind::Unknown;
  m_.set_state(s);
}

void Pass::draft(uint64_t at, bool nothing) {
  if (!final_) return;  // a first walk's claims are never finished
  const bool lost = nothing || stopped_.has_value();
  const auto& regs = m_.state().regs;
  if (!drafts_.empty() && drafts_.back().start == at) drafts_.pop_back();  // redrawn
  // The same claims go on (a lost draft claims no register): nothing is copied, as at most
  // instructions.
  if (!drafts_.empty() && drafts_.back().lost == lost && (lost || drafts_.back().regs == regs))
    return;
  Draft& d = drafts_.emplace_back();
  d.start = at;
  d.lost = lost;
  if (!lost) d.regs = regs;
}

void Pass::withdraw(size_t i, uint64_t from) {
  auto it = std::upper_bound(drafts_.begin(), drafts_.end(), from,
                             [](uint64_t v, const Draft& d) { return v < d.start; });
  if (it == drafts_.begin()) return;
  if (std::prev(it)->start < from) {  // split the draft that covers `from`
    Draft tail = *std::prev(it);
    tail.start = from;
    it = drafts_.insert(it, tail);
  } else {
    --it;
  }
  for (; it != drafts_.end(); ++it)
    if (!it->lost && it->regs[i].kind == Kind::Saved) it->regs[i].kind = Kind::Unknown;
}

void Pass::run(const Decoder& d, const Instructions& code, std::span<const TableRow* const> rows,
               const JumpStates* given) {
  final_ = given != nullptr;
  const JumpStates& jumps = given ? *given : jumps_;

  Instructions::Walk walk = code.walk();
  size_t next_row = 0;
  const TableRow* row = nullptr;
  // A function entered only by jumps starts as a block after a jump does.
  Flow previous = entered_by_jumps_ ? Flow::Terminal : Flow::Next;
  uint64_t at = func_start_;
  exits_.clear();
  // Where the code the model walks straight through began: the function's start, a block's,
  // or the return from a call (which a call that does not return never makes).
  uint64_t straight_from = func_start_;
  while (const cs_insn* insn = walk.next(at)) {
    bool boundary = false;
    while (next_row < rows.size() && rows[next_row]->start <= at) {
      if (rows[next_row]->start < at)
        lose(at, StopKind::RowInsideInstruction,
             fmt::format("row at {:#x} starts inside an instruction", rows[next_row]->start));
      row = rows[next_row++];
      boundary = true;
    }
    const auto key = key_of(row, info_);
    if (previous == Flow::Terminal && is_padding(m_.arch(), *insn)) {
      draft(at, true);  // alignment between blocks: never executed, nothing to claim
      continue;
    }
    if (previous == Flow::Terminal || previous == Flow::Call) straight_from = at;
    if (!stopped_) {
      if (previous == Flow::Terminal ||
          (previous == Flow::Call && boundary && !matches(m_, key, info_)))
        start_block(at, key, jumps);
      else if (boundary && !matches(m_, key, info_))
        lose(at, at == func_start_ ? StopKind::NotCalled : StopKind::FrameMismatch,
             fmt::format("the code's frame at {:#x} is not the row's", at));
      else if (const auto join = jumps.by_target.find(at); join != jumps.by_target.end())
        m_.set_state(key ? at_key(meet(m_.state(), join->second), *key)
                         : meet(m_.state(), join->second));
    }
    draft(at);
    if (stopped_) break;  // nothing is claimed from here on
    // A jump within the function (a tail call's leaves it: no block here starts from it).
    // Capstone puts AArch64 `bl` in the jump group too: a call (to the function itself, in a
    // recursion) returns here, and is no edge into the function's code.
    if (final_ && is_jump(d, *insn)) {
      const auto target = direct_target(m_.arch(), *insn);
      if (!target || *target < func_start_ || *target >= func_end_)
        exits_.push_back({at, target, m_.sp(), m_.fp()});
    }
    if (key && jumps_within(d, *insn, func_start_, func_end_)) {
      add(jumps_.by_cfa, *key, m_.state());
      if (const auto target = direct_target(m_.arch(), *insn))
        add(jumps_.by_target, *target, m_.state());
      if (jumps_.by_target.size() > kMaxTargets) {
        lose(at, StopKind::TooManyTargets, fmt::format("more than {} jump targets", kMaxTargets));
        draft(at);
        break;
      }
    }
    if (const Flow flow = apply(m_, d, *insn); flow != Flow::Padding) previous = flow;
    // A register stored into its own save slot again: the code since `straight_from` was
    // entered with it unsaved (an exception's landing pad after a call that does not return,
    // whose CFI has the register the caller's). Its claims there are withdrawn.
    if (const uint32_t resaved = m_.take_resaved(); resaved != 0 && final_)
      for (size_t i = 0; i < kMaxCalleeSaved; ++i)
        if (resaved >> i & 1u) withdraw(i, straight_from);
  }
  if (at < func_end_ && !stopped_) {
    lose(at, StopKind::Undecodable, fmt::format("no instruction decodes at {:#x}", at));
    draft(at);
  }
}

Analysis Pass::finish() const {
  Analysis out;
  out.stopped = stopped_;
  out.stop_kind = stop_kind_;
  out.fully_explained = !stopped_;
  out.exits.reserve(exits_.size());
  for (const ExitSeen& e : exits_)
    out.exits.push_back({e.from, e.to, jump_state(e.from, e.sp, e.fp, out.fully_explained)});
  const auto saved = m_.callee_saved();
  for (size_t k = 0; k < drafts_.size(); ++k) {
    const Draft& d = drafts_[k];
    Region region;
    region.start = d.start;
    region.end = k + 1 < drafts_.size() ? drafts_[k + 1].start : func_end_;
    bool unknown = d.lost;
    for (size_t i = 0; i < saved.size(); ++i) {
      const RegState& r = d.regs[i];
      // A restored register is claimed neither way: the CFI may name its slot or not there
      // (frame_model.cpp). No caller frame stops in an epilogue.
      if (r.kind == Kind::Saved)
        region.saved.push_back({saved[i], RegRule::at_cfa(r.slot)});
      else if (r.kind != Kind::Caller || (m_.tainted() >> i & 1u) != 0)
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

// Bounds the work on code whose jumps keep changing each other's states.
constexpr int kMaxWalks = 8;

Analysis analyze(Arch arch, Bytes code, uint64_t func_start, std::span<const TableRow> rows,
                 std::span<const Entry> entries) {
  if (code.empty() || code.size() > UINT64_MAX - func_start) return {};
  detail::Decoder* decoder = detail::Decoder::for_arch(arch);
  if (decoder == nullptr) {
    Analysis out;
    out.regions.push_back({func_start, func_start + code.size(), {}, false});
    out.stopped = Error{".text", 0, "architecture",
                        fmt::format("no prologue analysis for {}", arch_name(arch)),
                        ErrorKind::Unsupported};
    out.stop_kind = StopKind::NoAnalysis;
    return out;
  }
  // Walks until the jumps' states stop changing: each walk starts blocks from the previous
  // walk's jumps, which include those further on (a loop's back edge). Typically three.
  const uint64_t func_end = func_start + code.size();
  const detail::Instructions instructions(*decoder, code, func_start);
  const std::vector<const TableRow*> within = detail::rows_within(rows, func_start, func_end);
  thread_local std::vector<detail::Draft> drafts;
  if (entries.empty() && !detail::may_jump_within(*decoder, instructions, func_start, func_end)) {
    // No walk can find a jump: the first would give the second none, and the second's
    // analysis would be the answer. It is walked alone (straight-line code: about a third
    // of a compiled program's functions).
    const detail::JumpStates none;
    detail::Pass only(arch, func_start, func_end, drafts, entries);
    only.run(*decoder, instructions, within, &none);
    return only.finish();
  }
  detail::Pass first(arch, func_start, func_end, drafts, entries);
  first.run(*decoder, instructions, within, nullptr);
  detail::JumpStates jumps = first.jumps();
  for (int walk = 0; walk < kMaxWalks; ++walk) {
    detail::Pass next(arch, func_start, func_end, drafts, entries);
    next.run(*decoder, instructions, within, &jumps);
    if (next.jumps() == jumps) return next.finish();
    jumps = next.jumps();
  }
  Analysis out;
  out.regions.push_back({func_start, func_end, {}, false});
  out.stopped = Error{".text", 0, "instruction",
                      fmt::format("the jumps' frame states did not settle in {} walks", kMaxWalks),
                      ErrorKind::Unsupported};
  out.stop_kind = StopKind::Unsettled;
  return out;
}

}  // namespace unwindkit::prologue
