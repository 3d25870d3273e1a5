// The stack walker: from one thread's registers, frame by frame, asks the unwind sources in
// order (DWARF CFI → SFrame → frame-pointer chain by default) for the rule at the frame's
// PC, steps with the first one that gives a plausible caller, and stops with a reason.
//
// Guards (the SFrame notes' "strict reader" bar, applied to every source): the CFA must be
// word-aligned and move up the stack (except across a signal frame, which may switch
// stacks); rules based on registers other than SP/FP only in the innermost frame and right
// above a signal frame; a zero return address ends the walk; an undefined one ends it as
// the outermost frame; a depth bound and a (pc, cfa) cycle check end runaway walks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/rules.h"
#include "unwindkit/stepper.h"
#include "unwindkit/unwind/modules.h"

namespace unwindkit::unwind {

struct WalkOptions {
  // Sources to try, in order: Cfi, SFrame, FramePointer (others are ignored).
  std::vector<Source> sources = {Source::Cfi, Source::SFrame, Source::FramePointer};
  size_t max_depth = 1024;
  Endian endian = Endian::Little;
  uint64_t pac_mask = StepOptions{}.pac_mask;
};

struct Frame {
  size_t index = 0;
  uint64_t pc = 0;
  std::optional<uint64_t> cfa;  // unknown when no source could unwind this frame
  Module* module = nullptr;     // nullptr: the pc is in no known module
  uint64_t module_offset = 0;   // ELF address in the module (pc - load bias)
  std::optional<Source> source; // the source whose rule unwound this frame
  bool signal_frame = false;    // the rule said: a signal trampoline
  RegisterSet regs;             // this frame's registers (unknown ones left out)
  // Why earlier sources were passed over for this frame ("cfi: ..."), in order.
  std::vector<std::string> source_errors;
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

Walk walk(const RegisterSet& regs, ModuleMap& modules, const MemoryReader& mem,
          const WalkOptions& options = {});

// The frame-pointer convention as a rule: CFA = FP + 2 words, RA at CFA - 1 word, saved FP
// at CFA - 2 words (x86_64 and i386 `push fp; mov sp, fp`; the AArch64 frame record).
// Error for architectures without one (s390x keeps a back chain instead).
Result<UnwindRule> frame_pointer_rule(Arch arch);

}  // namespace unwindkit::unwind
