// DWARF CFI writer (see cfi_writer.h). Opcode and operator values come from elfutils'
// <dwarf.h>, the one definition of them this project uses.
#include "unwindkit/dwarf/cfi_writer.h"

#include <dwarf.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "../huge_pages.h"
#include "unwindkit/stepper.h"

namespace unwindkit::dwarf {
namespace {

constexpr uint8_t kCieVersion = 3;  // version 3: the return-address column is a ULEB128
constexpr uint8_t kEhCieVersion = 1;  // .eh_frame's: the return-address column is a byte
constexpr uint32_t kEhCieId = 0;  // .debug_frame marks a CIE with DW_CIE_ID_32
constexpr uint64_t kUdata4Limit = uint64_t{1} << 32;
constexpr uint8_t kLowRegisterLimit = 64;  // DW_CFA_offset packs registers below 64
constexpr uint8_t kBregDirectLimit = 32;   // DW_OP_breg0..31; above: DW_OP_bregx

// Bytes written at the end of a buffer with room ahead: a field is stored into the room, with
// no capacity check per byte and no call (a 1 M-function module's file has millions of
// fields and rows; resizing for each cost a memset and a memcpy call).
class Out {
 public:
  explicit Out(Endian endian) : endian_(endian) {}
  std::span<const uint8_t> bytes() const { return {bytes_.data(), size_}; }
  std::vector<uint8_t> take() && {
    bytes_.resize(size_);
    return std::move(bytes_);
  }
  void reserve(size_t n) {
    bytes_.reserve(n);
    advise_huge_pages(bytes_.data(), bytes_.capacity());  // a large file's: written throughout
  }
  size_t size() const { return size_; }

  void u8(uint8_t v) { *room(1) = v; }
  void uint(uint64_t v, unsigned size) { uint(v, size, room(size) - bytes_.data()); }
  // Written over the bytes at `at` (a field whose value was known later).
  void uint(uint64_t v, unsigned size, size_t at) {
    uint8_t* to = bytes_.data() + at;
    if (endian_ == Endian::Little && host_endian() == Endian::Little) {  // its low bytes as they lie
      switch (size) {  // a constant size each: a store, not a call
        case 1: std::memcpy(to, &v, 1); return;
        case 2: std::memcpy(to, &v, 2); return;
        case 4: std::memcpy(to, &v, 4); return;
        case 8: std::memcpy(to, &v, 8); return;
        default: break;
      }
    }
    for (unsigned i = 0; i < size; ++i) {
      const unsigned shift = endian_ == Endian::Little ? 8 * i : 8 * (size - 1 - i);
      to[i] = static_cast<uint8_t>(v >> shift);
    }
  }
  void uleb(uint64_t v) {
    do {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      if (v != 0) byte |= 0x80;
      u8(byte);
    } while (v != 0);
  }
  void sleb(int64_t v) {
    bool more = true;
    while (more) {
      uint8_t byte = v & 0x7f;
      v >>= 7;  // arithmetic shift: sign-propagating
      more = !((v == 0 && (byte & 0x40) == 0) || (v == -1 && (byte & 0x40) != 0));
      if (more) byte |= 0x80;
      u8(byte);
    }
  }
  void append(std::span<const uint8_t> other) {
    if (!other.empty()) std::memcpy(room(other.size()), other.data(), other.size());
  }

 private:
  // `n` bytes more at the end, to be written.
  uint8_t* room(size_t n) {
    if (bytes_.size() - size_ < n) grow(n);
    uint8_t* at = bytes_.data() + size_;
    size_ += n;
    return at;
  }
  // Room for `n` bytes and more, zeroed: as much again as there is, from kLeastRoom (an
  // expression's few bytes) to kMostRoom (a large file's reserved pages are touched only as
  // they are written).
  [[gnu::noinline]] void grow(size_t n) {
    bytes_.resize(size_ + std::max(n, std::clamp(bytes_.size(), kLeastRoom, kMostRoom)));
  }
  static constexpr size_t kLeastRoom = 64;
  static constexpr size_t kMostRoom = size_t{64} << 10;

  Endian endian_;
  std::vector<uint8_t> bytes_;  // [0, size_) written, the rest room
  size_t size_ = 0;
};

// A DWARF expression pushing reg + offset.
std::vector<uint8_t> breg_expression(uint16_t reg, int64_t offset, Endian endian) {
  Out e(endian);
  if (reg < kBregDirectLimit) {
    e.u8(static_cast<uint8_t>(DW_OP_breg0 + reg));
  } else {
    e.u8(DW_OP_bregx);
    e.uleb(reg);
  }
  e.sleb(offset);
  return std::move(e).take();
}

// Register rules by DWARF number, visited in ascending order. Every row of every function
// states a handful of registers twice over (the row's rules, then what was written before),
// so the common numbers are slots found by index, with a bit each saying which are set:
// a sorted vector's search and inserts were half of a 1 M-function module's side file
// (callgrind). Numbers from kDirect up (none of the architectures' usual registers) stay
// in a sorted vector.
class RegRules {
 public:
  // `reg`'s rule, or nullptr when it has none.
  const RegRule* find(uint16_t reg) const {
    if (reg < kDirect) return has(reg) ? &direct_[reg] : nullptr;
    const auto it = lower(reg);
    return it != high_.end() && it->first == reg ? &it->second : nullptr;
  }
  bool contains(uint16_t reg) const { return find(reg) != nullptr; }
  // `reg`'s rule becomes `rule`.
  void set(uint16_t reg, const RegRule& rule) {
    if (reg < kDirect) {
      present_[reg / 64] |= uint64_t{1} << (reg % 64);
      direct_[reg] = rule;
      return;
    }
    const auto it = lower(reg);
    if (it != high_.end() && it->first == reg)
      it->second = rule;
    else
      high_.insert(it, {reg, rule});
  }
  // `reg`'s rule, unless it has one.
  void add(uint16_t reg, const RegRule& rule) {
    if (!contains(reg)) set(reg, rule);
  }
  void clear() {
    present_ = {};
    high_.clear();
  }
  bool operator==(const RegRules& other) const {
    if (present_ != other.present_ || high_ != other.high_) return false;
    bool same = true;
    each([&](uint16_t reg, const RegRule& rule) { same = same && other.direct_[reg] == rule; });
    return same;
  }
  // f(reg, rule) for every rule, by ascending register. f may change the rule of a register
  // visited (set on a register that has one), not which registers have one.
  template <class F>
  void each(F&& f) const {
    for (size_t word = 0; word < present_.size(); ++word)
      for (uint64_t bits = present_[word]; bits != 0; bits &= bits - 1) {
        const auto reg = static_cast<uint16_t>(word * 64 + static_cast<size_t>(std::countr_zero(bits)));
        f(reg, direct_[reg]);
      }
    for (const auto& [reg, rule] : high_) f(reg, rule);
  }

 private:
  using Entry = std::pair<uint16_t, RegRule>;
  // AArch64's callee-saved d8-d15 are 72-79.
  static constexpr uint16_t kDirect = 128;
  bool has(uint16_t reg) const { return (present_[reg / 64] >> (reg % 64)) & 1; }
  // The first high entry not below `reg`, in `high` (const or not).
  template <class High>
  static auto lower(High& high, uint16_t reg) {
    return std::lower_bound(high.begin(), high.end(), reg,
                            [](const Entry& e, uint16_t r) { return e.first < r; });
  }
  std::vector<Entry>::iterator lower(uint16_t reg) { return lower(high_, reg); }
  std::vector<Entry>::const_iterator lower(uint16_t reg) const { return lower(high_, reg); }
  std::array<uint64_t, kDirect / 64> present_{};
  std::array<RegRule, kDirect> direct_{};
  std::vector<Entry> high_;
};

// What an FDE's program has stated so far: what the next row is stated against.
struct RowState {
  std::optional<CfaRule> cfa;
  RegRules regs;  // every register stated, those forgotten since as "same value"
  bool ra_mangled = false;
  bool operator==(const RowState&) const = default;
};

// Every register a rule states, by DWARF number, into `rules`.
void register_rules(const UnwindRule& rule, RegRules& rules) {
  const ArchInfo& arch = arch_info(rule.arch);
  rules.clear();
  rules.set(arch.ra, rule.ra);
  rules.set(arch.fp, rule.fp);
  for (const SavedReg& saved : rule.saved) rules.set(saved.reg, saved.rule);
  if (rule.sp_from_cfa != 0) rules.set(arch.sp, RegRule::val_cfa(rule.sp_from_cfa));
  // Unproven callee-saved registers: undefined, so the debugger shows them unavailable
  // (GDB `<not saved>`) instead of assuming the DWARF default, "same value".
  if (rule.unlisted == Unlisted::Unavailable && !rule.outermost())
    for (uint16_t r : callee_saved_registers(rule.arch)) rules.add(r, RegRule::undefined());
}

// One FDE's rows at a time (start_function), each stated by what changed from the previous.
class RowWriter {
 public:
  RowWriter(Out& out, const CfiWriterOptions& options)
      : out_(&out), options_(options), data_align_(-static_cast<int64_t>(arch_word_size(options.arch))) {
    for (uint16_t r : options.cie_undefined) initial_.regs.set(r, RegRule::undefined());
  }

  // What the CIE states: an FDE's state before its first instruction.
  const RowState& initial() const { return initial_; }
  void start_function() {
    // Not a copy of initial_: a RowState holds a slot for every register (kDirect of them),
    // and this is once per function.
    state_.cfa.reset();
    state_.regs.clear();
    for (uint16_t r : options_.cie_undefined) state_.regs.set(r, RegRule::undefined());
    state_.ra_mangled = false;
  }
  const RowState& state() const { return state_; }
  void set_state(const RowState& state) { state_ = state; }
  // Where the statements go from now on.
  void write_to(Out& out) { out_ = &out; }

  // `rule` stated by what changed since the last row (`wanted`: scratch space).
  void row(const UnwindRule& rule, RegRules& wanted) {
    cfa(rule.cfa);
    register_rules(rule, wanted);
    forget_others(wanted);
    wanted.each([&](uint16_t r, const RegRule& stated) { reg(r, stated); });
    ra_mangled(rule.ra_mangled);
  }

 private:

  void cfa(const CfaRule& rule) {
    if (state_.cfa && *state_.cfa == rule) return;
    state_.cfa = rule;
    if (rule.kind == CfaRule::Kind::DerefRegOffset) {
      Out e(options_.endian);
      e.append(breg_expression(rule.reg, rule.offset, options_.endian));
      e.u8(DW_OP_deref);
      block(DW_CFA_def_cfa_expression, std::nullopt, e.bytes());
    } else if (rule.offset >= 0) {
      out_->u8(DW_CFA_def_cfa);
      out_->uleb(rule.reg);
      out_->uleb(static_cast<uint64_t>(rule.offset));
    } else if (rule.offset % data_align_ == 0) {
      out_->u8(DW_CFA_def_cfa_sf);
      out_->uleb(rule.reg);
      out_->sleb(rule.offset / data_align_);
    } else {
      block(DW_CFA_def_cfa_expression, std::nullopt,
            breg_expression(rule.reg, rule.offset, options_.endian));
    }
  }

  void reg(uint16_t reg, const RegRule& rule) {
    if (const RegRule* had = state_.regs.find(reg); had != nullptr && *had == rule) return;
    state_.regs.set(reg, rule);
    switch (rule.kind) {
      case RegRule::Kind::Unchanged:
        out_->u8(DW_CFA_same_value);
        out_->uleb(reg);
        break;
      case RegRule::Kind::Undefined:
        out_->u8(DW_CFA_undefined);
        out_->uleb(reg);
        break;
      case RegRule::Kind::AtCfa:
        at_cfa(reg, rule.offset);
        break;
      case RegRule::Kind::ValCfa:
        if (rule.offset % data_align_ == 0) {
          out_->u8(DW_CFA_val_offset_sf);
          out_->uleb(reg);
          out_->sleb(rule.offset / data_align_);
        } else {
          cfa_plus(DW_CFA_val_expression, reg, rule.offset);
        }
        break;
      case RegRule::Kind::InReg:
        if (rule.offset == 0) {
          out_->u8(DW_CFA_register);
          out_->uleb(reg);
          out_->uleb(rule.reg);
        } else {
          block(DW_CFA_val_expression, reg,
                breg_expression(rule.reg, rule.offset, options_.endian));
        }
        break;
      case RegRule::Kind::AtReg:
        block(DW_CFA_expression, reg, breg_expression(rule.reg, rule.offset, options_.endian));
        break;
    }
  }

  // Registers a previous row named that this row does not: back to "same value".
  void forget_others(const RegRules& wanted) {
    // reg() changes only the rule of a register already here: the iteration stays valid.
    state_.regs.each([&](uint16_t r, const RegRule& rule) {
      if (!wanted.contains(r) && rule.kind != RegRule::Kind::Unchanged) reg(r, RegRule::unchanged());
    });
  }

  // AArch64 PAC: DW_CFA_AARCH64_negate_ra_state toggles the state, so emit it on changes.
  void ra_mangled(bool mangled) {
    if (mangled == state_.ra_mangled) return;
    state_.ra_mangled = mangled;
    out_->u8(DW_CFA_AARCH64_negate_ra_state);
  }

  void at_cfa(uint16_t reg, int64_t offset) {
    if (offset % data_align_ != 0) {
      cfa_plus(DW_CFA_expression, reg, offset);
      return;
    }
    int64_t factored = offset / data_align_;
    if (factored >= 0 && reg < kLowRegisterLimit) {
      out_->u8(static_cast<uint8_t>(DW_CFA_offset | reg));
      out_->uleb(static_cast<uint64_t>(factored));
    } else {
      out_->u8(DW_CFA_offset_extended_sf);
      out_->uleb(reg);
      out_->sleb(factored);
    }
  }
  // DW_CFA_[val_]expression starts with the CFA pushed: add the offset to it.
  void cfa_plus(uint8_t op, uint16_t reg, int64_t offset) {
    Out e(options_.endian);
    e.u8(DW_OP_consts);
    e.sleb(offset);
    e.u8(DW_OP_plus);
    block(op, reg, e.bytes());
  }
  void block(uint8_t op, std::optional<uint16_t> reg, std::span<const uint8_t> expr) {
    out_->u8(op);
    if (reg) out_->uleb(*reg);
    out_->uleb(expr.size());
    out_->append(expr);
  }

  Out* out_;
  const CfiWriterOptions& options_;
  int64_t data_align_;
  RowState initial_;
  RowState state_;
};

void advance(Out& out, uint64_t delta) {
  if (delta == 0) return;
  if (delta < 0x40) {
    out.u8(static_cast<uint8_t>(DW_CFA_advance_loc | delta));
  } else if (delta <= 0xff) {
    out.u8(DW_CFA_advance_loc1);
    out.uint(delta, 1);
  } else if (delta <= 0xffff) {
    out.u8(DW_CFA_advance_loc2);
    out.uint(delta, 2);
  } else {
    out.u8(DW_CFA_advance_loc4);
    out.uint(delta, 4);
  }
}

// Entries are padded with DW_CFA_nop to a multiple of the address size.
void pad_and_close(Out& out, size_t length_field, unsigned address_size) {
  while ((out.size() - length_field) % address_size != 0) out.u8(DW_CFA_nop);
  out.uint(out.size() - length_field - 4, 4, length_field);
}

// Rows given by a rule's index (CfiWriter::add's second form): each state a program reaches
// once, and for a state and a rule, once, the bytes that state the rule and the state after.
class RuleSteps {
 public:
  struct Step {
    uint32_t bytes_at = 0;
    uint32_t length = 0;
    uint32_t next = 0;  // state
  };
  static constexpr uint32_t kStart = 0;  // an FDE's start: what the CIE states

  explicit RuleSteps(const RowState& initial) : states_{initial} {}

  const RowState& state(uint32_t id) const { return states_[id]; }
  std::span<const uint8_t> bytes(const Step& step) const {
    return std::span<const uint8_t>(bytes_).subspan(step.bytes_at, step.length);
  }
  // The step from `state` by rule `rule` (whose rule is `rules[rule]`), worked out by `rows`
  // the first time it is asked for.
  const Step& step(uint32_t state, uint32_t rule, std::span<const UnwindRule> rules,
                   RowWriter& rows, RegRules& wanted, Endian endian) {
    std::vector<int32_t>& known = by_state_[state];
    if (rule >= known.size()) known.resize(rule + 1, -1);
    if (known[rule] >= 0) return steps_[static_cast<size_t>(known[rule])];
    Out scratch(endian);
    rows.set_state(states_[state]);
    rows.write_to(scratch);
    rows.row(rules[rule], wanted);
    Step made{static_cast<uint32_t>(bytes_.size()), static_cast<uint32_t>(scratch.size()),
              intern(rows.state())};
    bytes_.insert(bytes_.end(), scratch.bytes().begin(), scratch.bytes().end());
    by_state_[state][rule] = static_cast<int32_t>(steps_.size());
    steps_.push_back(made);
    return steps_.back();
  }
  // The id of `state`, made when new.
  uint32_t intern(const RowState& state) {
    for (size_t i = 0; i < states_.size(); ++i)
      if (states_[i] == state) return static_cast<uint32_t>(i);
    states_.push_back(state);
    by_state_.emplace_back();
    return static_cast<uint32_t>(states_.size() - 1);
  }

 private:
  std::vector<RowState> states_;
  // [state][rule]: the step's index in steps_, or -1 while unknown.
  std::vector<std::vector<int32_t>> by_state_ = std::vector<std::vector<int32_t>>(1);
  std::vector<Step> steps_;
  std::vector<uint8_t> bytes_;
};

}  // namespace

// The writer's state: the bytes so far, and the FDE left open for the next function to join.
struct CfiWriter::State {
  State(const CfiWriterOptions& o, bool eh_frame)
      : options(o), eh(eh_frame), out(o.endian), rows(out, options), steps(rows.initial()) {}

  CfiWriterOptions options;
  bool eh;
  Out out;
  RowWriter rows;
  RegRules wanted;
  unsigned address_size = 0;
  size_t cie = 0;
  // The open FDE: its header's offset, where its program starts, the addresses it covers and
  // its last row's.
  size_t fde = 0, program = 0;
  uint64_t fde_start = 0, fde_end = 0, at = 0;
  RuleSteps steps;
  // The open FDE's state in `steps` when its last row was stated from there (then `rows`
  // does not hold it).
  std::optional<uint32_t> step_state;

  void close() {
    if (fde_end == 0) return;
    out.uint(fde_end - fde_start, address_size, fde + 8 + address_size);
    pad_and_close(out, fde, address_size);
  }

  // Goes on in the open FDE with a function [start, end) (`row_at_start`: its first row is at
  // its start), else opens one; whether it went on.
  bool begin(uint64_t start, uint64_t end, bool row_at_start) {
    // Only a function with a row at its start goes on in the open FDE (its row there stated
    // by what changed): before a later first row, its own FDE has no rule at all, which the
    // previous function's last row would replace.
    if (fde_end != 0 && start == fde_end && out.size() - program < options.join_within &&
        row_at_start) {
      fde_end = end;
      return true;
    }
    close();
    fde = out.size();
    out.uint(0, 4);  // length
    // CIE pointer: .debug_frame's is the CIE's section offset, .eh_frame's the distance
    // back from this field to it.
    out.uint(eh ? out.size() - cie : cie, 4);
    out.uint(start, address_size);
    out.uint(0, address_size);  // address range, patched at the close
    if (eh) out.uleb(0);  // no augmentation data
    // What the CIE states: `rows` starts from there when the FDE's rows are given by rule
    // (add(CfiFunction) sets it); rows given by index go from the steps' start state.
    step_state = RuleSteps::kStart;
    program = out.size();
    fde_start = at = start;
    fde_end = end;
    return false;
  }

  // Whether a row at `address` of the function [start, end) is stated; if so, the advance to it
  // is written. Unsorted or outside: skipped.
  bool advance_to(uint64_t address, uint64_t start, uint64_t end) {
    if (address < at || address < start || address >= end) return false;
    advance(out, address - at);
    at = address;
    return true;
  }
};

CfiWriter::CfiWriter(CfiSection section, const CfiWriterOptions& options, uint64_t highest_end,
                     size_t reserve)
    : state_(std::make_unique<State>(options, section == CfiSection::EhFrame)) {
  State& st = *state_;
  Out& out = st.out;
  out.reserve(reserve);
  RegisterSet names(options.arch);
  st.address_size = !st.eh ? options.address_size : highest_end <= kUdata4Limit ? 4 : 8;
  st.cie = out.size();
  out.uint(0, 4);  // length, patched below
  out.uint(st.eh ? kEhCieId : uint32_t{DW_CIE_ID_32}, 4);
  out.u8(st.eh ? kEhCieVersion : kCieVersion);
  if (st.eh) {
    out.u8('z');  // augmentation "zR": its data's length, then the FDE address encoding
    out.u8('R');
  }
  out.u8(0);  // end of the augmentation string
  out.uleb(1);  // code alignment factor
  out.sleb(-static_cast<int64_t>(arch_word_size(options.arch)));  // data alignment factor
  if (st.eh) {
    out.u8(static_cast<uint8_t>(names.ra_reg()));
    out.uleb(1);
    out.u8(st.address_size == 4 ? DW_EH_PE_udata4 : DW_EH_PE_udata8);
  } else {
    out.uleb(names.ra_reg());
  }
  for (uint16_t reg : options.cie_undefined) {
    out.u8(DW_CFA_undefined);
    out.uleb(reg);
  }
  pad_and_close(out, st.cie, st.address_size);
}

CfiWriter::~CfiWriter() = default;

void CfiWriter::add(const CfiFunction& fn) {
  State& st = *state_;
  const bool joined =
      st.begin(fn.start, fn.end, !fn.rows.empty() && fn.rows.front().address == fn.start);
  if (!joined) st.rows.start_function();
  else if (st.step_state) st.rows.set_state(st.steps.state(*st.step_state));
  st.step_state.reset();
  for (const CfiRow& row : fn.rows)
    if (st.advance_to(row.address, fn.start, fn.end)) st.rows.row(row.rule, st.wanted);
}

void CfiWriter::add(uint64_t start, uint64_t end, std::span<const CfiRuleRow> rows,
                    std::span<const UnwindRule> rules) {
  State& st = *state_;
  const bool joined = st.begin(start, end, !rows.empty() && rows.front().address == start);
  uint32_t state = joined && !st.step_state ? st.steps.intern(st.rows.state()) : *st.step_state;
  for (const CfiRuleRow& row : rows) {
    if (row.rule >= rules.size() || !st.advance_to(row.address, start, end)) continue;
    const RuleSteps::Step& step =
        st.steps.step(state, row.rule, rules, st.rows, st.wanted, st.options.endian);
    const std::span<const uint8_t> bytes = st.steps.bytes(step);
    st.out.append(bytes);
    state = step.next;
  }
  st.rows.write_to(st.out);
  st.step_state = state;
}

std::vector<uint8_t> CfiWriter::finish() && {
  state_->close();
  return std::move(state_->out).take();
}

namespace {

// Both sections of whole function lists: their highest end and about their size known first.
std::vector<uint8_t> write_all(std::span<const CfiFunction> functions,
                               const CfiWriterOptions& options, CfiSection section) {
  uint64_t highest_end = 0;
  size_t row_count = 0;
  for (const CfiFunction& fn : functions) {
    highest_end = std::max(highest_end, fn.end);
    row_count += fn.rows.size();
  }
  CfiWriter writer(section, options, highest_end, cfi_size_estimate(functions.size(), row_count));
  for (const CfiFunction& fn : functions) writer.add(fn);
  return std::move(writer).finish();
}

}  // namespace

std::vector<uint8_t> write_debug_frame(std::span<const CfiFunction> functions,
                                       const CfiWriterOptions& options) {
  return write_all(functions, options, CfiSection::DebugFrame);
}

std::vector<uint8_t> write_eh_frame(std::span<const CfiFunction> functions,
                                    const CfiWriterOptions& options) {
  return write_all(functions, options, CfiSection::EhFrame);
}

}  // namespace unwindkit::dwarf
