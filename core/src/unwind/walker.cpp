#include "unwindkit/unwind/walker.h"

#include <fmt/format.h>

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

namespace {

class Walker {
 public:
  Walker(ModuleMap& modules, const MemoryReader& mem, const WalkOptions& options, Arch arch)
      : modules_(modules), mem_(mem), options_(options), arch_(arch) {}

  Walk run(RegisterSet regs) {
    Walk out;
    std::optional<uint64_t> prev_cfa;
    bool prev_signal = false;
    std::set<std::pair<uint64_t, uint64_t>> seen;  // (pc, cfa)
    while (true) {
      if (out.frames.size() >= options_.max_depth) {
        return stop(out, StopKind::DepthLimit,
                    fmt::format("depth limit: {} frames", options_.max_depth));
      }
      const uint64_t pc = *regs.pc();
      Frame f;
      f.index = out.frames.size();
      f.pc = pc;
      f.regs = regs;
      f.module = modules_.find(pc);
      if (f.module) f.module_offset = f.module->elf_address(pc);
      // The innermost frame and the frame a signal interrupted stopped exactly at pc; any
      // other frame is at a return address, just past its call (which may have been the
      // function's last instruction), so its rule is looked up at pc - 1.
      const bool exact = f.index == 0 || prev_signal;
      const uint64_t at = exact ? pc : pc - 1;

      std::optional<StepResult> result;
      std::optional<UnwindRule> used;
      fp_zero_ = false;
      for (Source source : options_.sources) {
        auto rule = rule_for(source, at, regs);
        if (!rule) {
          f.source_errors.push_back(fmt::format("{}: {}", source_name(source), rule.error().to_string()));
          continue;
        }
        if (!*rule) {
          f.source_errors.push_back(fmt::format("{}: nothing covers pc {:#x}", source_name(source), at));
          continue;
        }
        StepOptions so;
        so.endian = options_.endian;
        so.pac_mask = options_.pac_mask;
        so.trust_all_registers = exact || (*rule)->signal_frame;
        auto r = step(**rule, regs, mem_, so);
        if (!r) {
          f.source_errors.push_back(fmt::format("{}: {}", source_name(source), r.error().to_string()));
          continue;
        }
        if (auto bad = implausible(**rule, *r, regs, at, prev_cfa)) {
          f.source_errors.push_back(fmt::format("{}: {}", source_name(source), *bad));
          continue;
        }
        result = std::move(*r);
        used = std::move(**rule);
        break;
      }

      if (!result) {
        std::string why;
        for (const auto& e : f.source_errors) why += (why.empty() ? "" : "; ") + e;
        out.frames.push_back(std::move(f));
        // psABI convention: the deepest frame (_start, a thread's start) sets the frame
        // pointer to 0. With no table for it, that is where a walk ends.
        if (fp_zero_)
          return stop(out, StopKind::FramePointerEnd,
                      fmt::format("end of the frame-pointer chain (fp = 0) at pc {:#x}: {}", at, why));
        return stop(out, StopKind::NoUnwindInfo,
                    fmt::format("no usable unwind rule for pc {:#x}: {}", at, why));
      }
      f.source = used->source;
      f.cfa = result->cfa;
      f.signal_frame = used->signal_frame;
      if (!seen.insert({pc, result->cfa}).second)
        return stop(out, StopKind::Cycle,
                    fmt::format("cycle: pc {:#x} with cfa {:#x} again", pc, result->cfa));
      out.frames.push_back(std::move(f));
      if (result->outermost)
        return stop(out, StopKind::Outermost,
                    fmt::format("outermost frame: {} says the return address at pc {:#x} is undefined",
                                source_name(used->source), pc));
      if (*result->caller.pc() == 0)
        return stop(out, StopKind::ZeroReturnAddress,
                    fmt::format("return address 0 above pc {:#x}", pc));
      prev_cfa = result->cfa;
      prev_signal = used->signal_frame;
      regs = std::move(result->caller);
    }
  }

 private:
  static Walk& stop(Walk& w, StopKind kind, std::string reason) {
    w.stop = kind;
    w.stop_reason = std::move(reason);
    return w;
  }

  Result<std::optional<UnwindRule>> rule_for(Source source, uint64_t at, const RegisterSet& regs) {
    Module* m = modules_.find(at);
    switch (source) {
      case Source::Cfi:
      case Source::SFrame:
        if (!m) return fail("modules", at, "pc", fmt::format("pc {:#x} is in no known module", at));
        return source == Source::Cfi ? m->cfi_rule(at) : m->sframe_rule(at);
      case Source::FramePointer: {
        if (regs.fp().value_or(0) == 0) {
          fp_zero_ = true;
          return fail("registers", 0, "fp", "frame pointer is 0: the end of the frame-pointer chain");
        }
        auto r = frame_pointer_rule(arch_);
        if (!r) return tl::unexpected(r.error());
        return std::optional<UnwindRule>(std::move(*r));
      }
      case Source::CompactUnwind: break;
    }
    return std::optional<UnwindRule>();
  }

  // The module of `at` promises a frame-pointer chain: its SFrame header says every
  // function keeps one (SFRAME_F_FRAME_POINTER, v1/v2).
  bool promises_frame_pointers(uint64_t at) {
    Module* m = modules_.find(at);
    if (!m) return false;
    auto s = m->sframe();
    return s && *s && ((*s)->header().flags & sframe::kFlagFramePointer) != 0;
  }

  // Why the step's result cannot be the caller, or nullopt if it can.
  std::optional<std::string> implausible(const UnwindRule& rule, const StepResult& r,
                                         const RegisterSet& regs, uint64_t at,
                                         std::optional<uint64_t> prev_cfa) {
    if (r.outermost) return std::nullopt;
    const unsigned word = arch_word_size(rule.arch);
    if (r.cfa % word != 0) return fmt::format("CFA {:#x} is not word-aligned", r.cfa);
    // A signal trampoline's CFA is the interrupted SP, which may be on another stack.
    if (!rule.signal_frame) {
      if (auto sp = regs.sp(); sp && r.cfa < *sp)
        return fmt::format("CFA {:#x} is below SP {:#x}", r.cfa, *sp);
      if (prev_cfa && r.cfa <= *prev_cfa)
        return fmt::format("CFA {:#x} does not move up the stack (previous {:#x})", r.cfa, *prev_cfa);
    }
    if (rule.source == Source::FramePointer) {
      const uint64_t fp = regs.fp().value_or(0);
      if (!promises_frame_pointers(at)) {
        // No promise: the chain must look like one. The saved FP is the caller's frame,
        // higher up (or 0 at the end), and the return address lands in code we know.
        const uint64_t saved = r.caller.fp().value_or(0);
        if (saved != 0 && saved <= fp)
          return fmt::format("saved frame pointer {:#x} is not above {:#x}", saved, fp);
        if (!modules_.modules().empty() && !modules_.find(*r.caller.pc()))
          return fmt::format("return address {:#x} is in no known module", *r.caller.pc());
      }
    }
    return std::nullopt;
  }

  ModuleMap& modules_;
  const MemoryReader& mem_;
  const WalkOptions& options_;
  Arch arch_;
  bool fp_zero_ = false;  // this frame's FP source failed because the FP is 0
};

}  // namespace

Walk walk(const RegisterSet& regs, ModuleMap& modules, const MemoryReader& mem,
          const WalkOptions& options) {
  Walk out;
  if (!regs.pc()) {
    out.stop = StopKind::NoUnwindInfo;
    out.stop_reason = "no unwind info: the thread has no pc";
    return out;
  }
  return Walker(modules, mem, options, regs.arch()).run(regs);
}

}  // namespace unwindkit::unwind
