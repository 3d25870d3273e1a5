#include "unwindkit/unwind/walker.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "unwindkit/sframe/constants.h"

namespace unwindkit::unwind {

Result<UnwindRule> frame_pointer_rule(Arch arch) {
  UnwindRule rule;
  rule.arch = arch;
  rule.source = Source::FramePointer;
  const auto word = static_cast<int64_t>(arch_word_size(arch));
  const RegisterSet names(arch);
  if (arch == Arch::S390x)
    return fail("fp", 0, "arch", "s390x has no frame-pointer chain (only an optional back chain)");
  rule.cfa = {CfaRule::Kind::RegOffset, names.fp_reg(), 2 * word};
  rule.ra = RegRule::at_cfa(-word);
  rule.fp = RegRule::at_cfa(-2 * word);
  return rule;
}

std::string PassedOver::message() const {
  if (why == Why::NotCovered) return fmt::format("{}: nothing covers pc {:#x}", source_name(source), address);
  return fmt::format("{}: {}", source_name(source), detail);
}

namespace {

StepOutcome ended(StepOutcome out, StopKind kind, std::string reason) {
  out.kind = StepOutcome::Kind::Ended;
  out.stop = kind;
  out.stop_reason = std::move(reason);
  return out;
}

// The module of `at` promises a frame-pointer chain: its SFrame header says every function
// keeps one (SFRAME_F_FRAME_POINTER, v1/v2).
bool promises_frame_pointers(Module* m) {
  if (m == nullptr) return false;
  auto s = m->sframe();
  return s && *s && ((*s)->header().flags & sframe::kFlagFramePointer) != 0;
}

bool has_source(const RuleSources& sources, Source kind) {
  return std::any_of(sources.begin(), sources.end(),
                     [kind](const auto& s) { return s->kind() == kind; });
}

}  // namespace

std::optional<std::string> FrameStepper::implausible(const UnwindRule& rule, const StepResult& r,
                                                     const RegisterSet& regs, Module* module,
                                                     std::optional<uint64_t> callee_cfa) const {
  if (r.outermost) return std::nullopt;
  const unsigned word = arch_word_size(rule.arch);
  if (r.cfa % word != 0) return fmt::format("CFA {:#x} is not word-aligned", r.cfa);
  // A signal trampoline's CFA is the interrupted SP, which may be on another stack.
  if (!rule.signal_frame) {
    if (auto sp = regs.sp(); sp && r.cfa < *sp)
      return fmt::format("CFA {:#x} is below SP {:#x}", r.cfa, *sp);
    if (callee_cfa && r.cfa <= *callee_cfa)
      return fmt::format("CFA {:#x} does not move up the stack (previous {:#x})", r.cfa, *callee_cfa);
  }
  if (rule.source == Source::FramePointer && !promises_frame_pointers(module)) {
    // No promise: the chain must look like one. The saved FP is the caller's frame, higher
    // up (or 0 at the end), and the return address lands in code we know.
    const uint64_t fp = regs.fp().value_or(0);
    const uint64_t saved = r.caller.fp().value_or(0);
    if (saved != 0 && saved <= fp)
      return fmt::format("saved frame pointer {:#x} is not above {:#x}", saved, fp);
    if (!modules_.modules().empty() && !modules_.find(*r.caller.pc()))
      return fmt::format("return address {:#x} is in no known module", *r.caller.pc());
  }
  return std::nullopt;
}

// The caller's pc is a return address, unless this frame is a signal trampoline: then the
// caller was interrupted at its pc, and every register it had was saved.
void FrameStepper::remember_caller(const UnwindRule& rule, const StepResult& r) {
  const uint64_t pc = *r.caller.pc();
  const CodeAddress address =
      rule.signal_frame ? CodeAddress::interrupted(pc) : CodeAddress::return_address(pc);
  callers_[callers_count_++ % kCallersKept] = {pc, r.caller.sp().value_or(0), address, r.cfa};
}

StepOutcome FrameStepper::step(const RegisterSet& regs, bool innermost) {
  StepOutcome out;
  Frame& f = out.frame;
  f.regs = regs;
  if (!regs.pc()) return ended(std::move(out), StopKind::NoUnwindInfo, "no unwind info: the frame has no pc");
  const uint64_t pc = *regs.pc();
  std::optional<uint64_t> callee_cfa;
  f.address = innermost ? CodeAddress::interrupted(pc) : CodeAddress::return_address(pc);
  if (innermost) callers_count_ = 0;
  const uint64_t sp = regs.sp().value_or(0);
  for (size_t i = 0; i < std::min(callers_count_, kCallersKept) && !innermost; ++i) {
    const Caller& c = callers_[(callers_count_ - 1 - i) % kCallersKept];  // newest first
    if (c.pc == pc && c.sp == sp) {
      f.address = c.address;
      callee_cfa = c.callee_cfa;
      break;
    }
  }
  const uint64_t at = f.address.lookup_address();
  f.module = modules_.find(at);
  if (f.module) f.module_offset = f.module->elf_address(pc);

  StepOptions so;
  so.endian = options_.endian;
  so.pac_mask = options_.pac_mask;
  so.trust_all_registers = f.address.trusts_all_registers();
  const RuleQuery query{f.address, f.module, regs};
  for (const auto& source : options_.sources) {
    const std::string_view name = source_name(source->kind());
    const bool debuggers = std::find(options_.left_to_debugger.begin(), options_.left_to_debugger.end(),
                                     source->kind()) != options_.left_to_debugger.end();
    auto rule = source->rule(query);
    auto pass = [&](PassedOver::Why why, std::string detail) {
      f.passed_over.push_back({source->kind(), why, at, std::move(detail)});
    };
    if (!rule) {
      pass(PassedOver::Why::TableError, rule.error().to_string());
      if (!debuggers) continue;
      // The debugger reads its own tables: one we cannot lower may still be its to unwind.
      out.kind = StepOutcome::Kind::LeftToDebugger;
      return out;
    }
    if (!*rule) {
      pass(PassedOver::Why::NotCovered, {});
      continue;
    }
    if (debuggers) {
      // The debugger unwinds this frame itself. Above a signal trampoline, what it finds was
      // interrupted all the same: step once to know that caller.
      if ((*rule)->signal_frame)
        if (auto r = unwindkit::step(**rule, regs, mem_, so); r && !r->outermost && r->caller.pc())
          remember_caller(**rule, *r);
      f.source = source->kind();
      f.rule = std::move(**rule);
      out.kind = StepOutcome::Kind::LeftToDebugger;
      return out;
    }
    auto r = unwindkit::step(**rule, regs, mem_, so);
    if (!r) {
      pass(PassedOver::Why::StepError, r.error().to_string());
      continue;
    }
    if (auto bad = implausible(**rule, *r, regs, f.module, callee_cfa)) {
      pass(PassedOver::Why::Implausible, *bad);
      continue;
    }
    f.source = source->kind();
    f.cfa = r->cfa;
    f.signal_frame = (*rule)->signal_frame;
    f.rule = std::move(**rule);
    if (r->outermost)
      return ended(std::move(out), StopKind::Outermost,
                   fmt::format("outermost frame: {} says the return address at pc {:#x} is undefined",
                               name, pc));
    if (*r->caller.pc() == 0)
      return ended(std::move(out), StopKind::ZeroReturnAddress,
                   fmt::format("return address 0 above pc {:#x}", pc));
    remember_caller(*f.rule, *r);
    out.caller = std::move(r->caller);
    out.kind = StepOutcome::Kind::Stepped;
    return out;
  }

  std::string why;
  for (const auto& p : f.passed_over) why += (why.empty() ? "" : "; ") + p.message();
  // psABI convention: the deepest frame (_start, a thread's start) sets the frame pointer to
  // 0. With no table for it, that is where a walk ends.
  if (has_source(options_.sources, Source::FramePointer) && regs.fp().value_or(0) == 0)
    return ended(std::move(out), StopKind::FramePointerEnd,
                 fmt::format("end of the frame-pointer chain (fp = 0) at pc {:#x}: {}", at, why));
  return ended(std::move(out), StopKind::NoUnwindInfo,
               fmt::format("no usable unwind rule for pc {:#x}: {}", at, why));
}

Walk walk(const RegisterSet& regs, const ModuleMap& modules, const MemoryReader& mem,
          const WalkOptions& options) {
  Walk w;
  if (!regs.pc()) {
    w.stop_reason = "no unwind info: the thread has no pc";
    return w;
  }
  FrameStepper stepper(modules, mem, options);
  std::set<std::pair<uint64_t, uint64_t>> seen;  // (pc, cfa)
  RegisterSet frame_regs = regs;
  while (true) {
    if (w.frames.size() >= options.max_depth) {
      w.stop = StopKind::DepthLimit;
      w.stop_reason = fmt::format("depth limit: {} frames", options.max_depth);
      return w;
    }
    StepOutcome s = stepper.step(frame_regs, w.frames.empty());
    s.frame.index = w.frames.size();
    const bool repeated = s.frame.cfa && !seen.insert({s.frame.pc(), *s.frame.cfa}).second;
    if (repeated) {
      w.stop = StopKind::Cycle;
      w.stop_reason = fmt::format("cycle: pc {:#x} with cfa {:#x} again", s.frame.pc(), *s.frame.cfa);
      return w;
    }
    w.frames.push_back(std::move(s.frame));
    switch (s.kind) {
      case StepOutcome::Kind::Stepped: frame_regs = std::move(s.caller); continue;
      case StepOutcome::Kind::Ended:
        w.stop = s.stop;
        w.stop_reason = std::move(s.stop_reason);
        return w;
      case StepOutcome::Kind::LeftToDebugger:
        w.stop = StopKind::NoUnwindInfo;
        w.stop_reason = fmt::format("pc {:#x} is left to the debugger", w.frames.back().pc());
        return w;
    }
  }
}

}  // namespace unwindkit::unwind
