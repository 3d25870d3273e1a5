// The stack walker and its one "step a frame" entry. Nothing else chooses rules, decides how
// far a frame's registers are trusted, or decides where a stack ends:
//   - walk() steps a thread's frames from its registers until the stack ends;
//   - FrameStepper::step() is walk()'s loop body, for a debugger that drives its own
//     unwinding frame by frame (GDB's frame unwinder calls it once per frame).
//
// For each frame the stepper
//   1. knows its CodeAddress (code_address.h): the innermost frame and the caller of a
//      signal frame stopped at their PC; every other frame is at a return address, looked up
//      at pc - 1 and trusted only for the registers rules recovered;
//   2. asks the rule sources in order (rule_source.h: DWARF CFI → SFrame → frame-pointer
//      chain by default) and steps with the first rule that gives a plausible caller;
//   3. checks the caller (the SFrame notes' strict-reader bar, for every source): the CFA is
//      word-aligned and moves up the stack, except across a signal frame, which may switch
//      stacks; a frame-pointer step with no table's promise must look like a chain;
//   4. says why the stack ends: a rule whose return address is undefined (the outermost
//      frame), a zero return address, the end of the frame-pointer chain, or nothing usable.
// walk() adds a depth bound and a (pc, cfa) cycle check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "unwindkit/rules.h"
#include "unwindkit/stepper.h"
#include "unwindkit/unwind/code_address.h"
#include "unwindkit/unwind/modules.h"
#include "unwindkit/unwind/rule_source.h"

namespace unwindkit::unwind {

inline constexpr Source kDefaultSources[] = {Source::Cfi, Source::SFrame, Source::EntryPoint,
                                             Source::FramePointer};

struct WalkOptions {
  // Sources to ask, in order. A front end may add its own (rule_source.h).
  RuleSources sources = builtin_sources(kDefaultSources);
  // Sources whose frames the debugger unwinds itself (GDB: its own DWARF CFI). Where one of
  // these gives a frame's first rule, the frame is left to the debugger.
  std::vector<Source> left_to_debugger;
  size_t max_depth = 1024;
  Endian endian = Endian::Little;
  uint64_t pac_mask = StepOptions{}.pac_mask;
};

// A source that did not unwind a frame, and why.
struct PassedOver {
  enum class Why : uint8_t {
    NotCovered,   // the source has nothing at this pc
    TableError,   // its table could not be read
    StepError,    // its rule could not be applied (memory, untrusted register)
    Implausible,  // its rule gave a caller that cannot be (the walker's checks)
  };
  Source source;
  Why why;
  uint64_t address = 0;  // the lookup address
  std::string detail;    // the error or implausibility (empty for NotCovered)
  // "sframe: nothing covers pc 0x4011bd", "cfi: <error>": made only when shown, since a walk
  // passes over a source in most frames.
  std::string message() const;
};

struct Frame {
  size_t index = 0;
  CodeAddress address = CodeAddress::interrupted(0);
  uint64_t pc() const { return address.pc(); }
  std::optional<uint64_t> cfa;   // unknown when no source could unwind this frame
  Module* module = nullptr;      // nullptr: the pc is in no known module
  uint64_t module_offset = 0;    // ELF address in the module (pc - load bias)
  std::optional<Source> source;  // the source whose rule unwound this frame
  std::optional<UnwindRule> rule;
  bool signal_frame = false;     // the rule said: a signal trampoline
  RegisterSet regs;              // this frame's registers (unknown ones left out)
  // The sources tried before `source` (all of them when none unwound it), in order.
  std::vector<PassedOver> passed_over;
};

enum class StopKind : uint8_t {
  Outermost,      // a rule said the return address is undefined: a complete walk
  ZeroReturnAddress,
  NoUnwindInfo,   // no source gave a usable rule for the last frame
  FramePointerEnd,  // nothing but the frame-pointer chain was left, and its FP is 0
  DepthLimit,
  Cycle,
};

struct Walk {
  std::vector<Frame> frames;
  StopKind stop = StopKind::NoUnwindInfo;
  std::string stop_reason;  // readable, starts with the kind: "outermost frame: ..."
};

struct StepOutcome {
  enum class Kind : uint8_t {
    Stepped,         // `caller` holds the caller's registers
    LeftToDebugger,  // a source in WalkOptions::left_to_debugger covers the frame
    Ended,           // the stack ends at this frame: `stop`, `stop_reason`
  };
  Kind kind = Kind::Ended;
  Frame frame;
  RegisterSet caller;
  StopKind stop = StopKind::NoUnwindInfo;
  std::string stop_reason;
};

class FrameStepper {
 public:
  // `modules`, `mem` and `options` must outlive the stepper.
  FrameStepper(const ModuleMap& modules, const MemoryReader& mem, const WalkOptions& options)
      : modules_(modules), mem_(mem), options_(options) {}

  // Steps the frame whose registers are `regs`; `innermost`: the thread's newest frame,
  // which starts a new walk. Any other frame is recognised by its (pc, sp) as a caller this
  // stepper computed (so the caller of a signal frame is known to be interrupted, and the
  // CFA must move up from its callee's); a frame it did not compute is at a return address.
  StepOutcome step(const RegisterSet& regs, bool innermost);

 private:
  struct Caller {
    uint64_t pc = 0, sp = 0;
    CodeAddress address = CodeAddress::interrupted(0);
    uint64_t callee_cfa = 0;
  };
  // A debugger asks about each caller right after the step that computed it, so the last few
  // are all a stepper needs to remember (and a ring costs nothing per frame).
  static constexpr size_t kCallersKept = 16;

  std::optional<std::string> implausible(const UnwindRule& rule, const StepResult& r,
                                         const RegisterSet& regs, Module* module,
                                         std::optional<uint64_t> callee_cfa) const;
  void remember_caller(const UnwindRule& rule, const StepResult& r);

  const ModuleMap& modules_;
  const MemoryReader& mem_;
  const WalkOptions& options_;
  std::array<Caller, kCallersKept> callers_{};
  size_t callers_count_ = 0;  // how many were ever remembered since the innermost frame
};

Walk walk(const RegisterSet& regs, const ModuleMap& modules, const MemoryReader& mem,
          const WalkOptions& options = {});

// The frame-pointer convention as a rule: CFA = FP + 2 words, RA at CFA - 1 word, saved FP
// at CFA - 2 words (x86_64 and i386 `push fp; mov sp, fp`; the AArch64 frame record).
// Error for architectures without one (s390x keeps a back chain instead).
Result<UnwindRule> frame_pointer_rule(Arch arch);

}  // namespace unwindkit::unwind
