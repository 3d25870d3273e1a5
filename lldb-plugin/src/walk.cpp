// unwindkit's own walk (see walk.h).
#include "walk.h"

#include <set>
#include <utility>

#include <fmt/format.h>

#include "unwindkit/sframe/sframe.h"

namespace unwindkit::lldb_plugin {
namespace {

// Stack from the process; file-backed pages a core lacks from the target's module files.
class LldbMemory : public MemoryReader {
 public:
  LldbMemory(lldb::SBTarget target, lldb::SBProcess process) : target_(target), process_(process) {}
  bool read(uint64_t addr, std::span<uint8_t> out) const override {
    lldb::SBError error;
    if (process_.ReadMemory(addr, out.data(), out.size(), error) == out.size() && error.Success())
      return true;
    lldb::SBAddress address = target_.ResolveLoadAddress(addr);
    return target_.ReadMemory(address, out.data(), out.size(), error) == out.size();
  }

 private:
  mutable lldb::SBTarget target_;
  mutable lldb::SBProcess process_;
};

}  // namespace

uint16_t general_register_count(Arch arch) {
  switch (arch) {
    case Arch::X86_64: return reg::x86_64::rip + 1;
    case Arch::AArch64: return reg::aarch64::pc + 1;
    case Arch::S390x: return 16;
    case Arch::I386: return reg::i386::eip + 1;
  }
  return 0;
}

namespace {

RegisterSet frame_registers(Arch arch, lldb::SBFrame frame) {
  RegisterSet regs(arch);
  for (uint16_t r = 0; r < general_register_count(arch); ++r) {
    lldb::SBValue value = frame.FindRegister(reg_name(arch, r).c_str());
    if (!value.IsValid()) continue;
    lldb::SBError error;
    uint64_t v = value.GetValueAsUnsigned(error, 0);
    if (error.Success()) regs.set(r, v);
  }
  regs.set_pc(frame.GetPC());
  return regs;
}

// The caller of the frame with `regs` as LLDB's own unwinder sees it: the frame after the
// LLDB frame with the same pc and stack pointer.
std::optional<RegisterSet> lldb_caller(Arch arch, lldb::SBThread thread, const RegisterSet& regs) {
  const uint32_t n = thread.GetNumFrames();
  for (uint32_t i = 0; i + 1 < n; ++i) {
    lldb::SBFrame f = thread.GetFrameAtIndex(i);
    if (f.GetPC() == regs.pc() && f.GetSP() == regs.sp())
      return frame_registers(arch, thread.GetFrameAtIndex(i + 1));
  }
  return std::nullopt;
}

}  // namespace

std::optional<Arch> target_arch(lldb::SBTarget target) {
  const char* triple = target.GetTriple();
  std::string_view t = triple ? triple : "";
  if (t.starts_with("x86_64")) return Arch::X86_64;
  if (t.starts_with("aarch64") || t.starts_with("arm64")) return Arch::AArch64;
  if (t.starts_with("s390x")) return Arch::S390x;
  return std::nullopt;
}

Walk walk_thread(Installer& installer, lldb::SBThread thread, size_t max_frames) {
  Walk walk;
  lldb::SBProcess process = thread.GetProcess();
  lldb::SBTarget target = process.GetTarget();
  auto arch = target_arch(target);
  if (!arch) {
    walk.end = "unsupported architecture";
    return walk;
  }
  LldbMemory memory(target, process);
  RegisterSet regs = frame_registers(*arch, thread.GetFrameAtIndex(0));
  bool caller = false;  // a caller's pc is a return address: look up the call (pc - 1)
  // (pc, sp) of every frame so far. Callers taken from LLDB's frame list are not checked for
  // progress like SFrame steps are; on a stack whose frame records loop, LLDB's list can
  // hold the same frame twice, and following it would go round until max_frames.
  std::set<std::pair<uint64_t, uint64_t>> seen;
  while (walk.frames.size() < max_frames) {
    uint64_t pc = regs.pc().value_or(0);
    if (!seen.insert({pc, regs.sp().value_or(0)}).second) {
      walk.end = fmt::format("frame at pc 0x{:x}, sp 0x{:x} seen before: the stack loops", pc,
                             regs.sp().value_or(0));
      return walk;
    }
    WalkFrame frame{regs, std::nullopt, ""};
    lldb::SBAddress address = target.ResolveLoadAddress(caller ? pc - 1 : pc);
    lldb::SBModule module = address.GetModule();
    if (module.IsValid() && module.GetFileSpec().GetFilename())
      frame.module = module.GetFileSpec().GetFilename();
    if (!module.IsValid()) {
      walk.frames.push_back(frame);
      walk.end = fmt::format("pc 0x{:x} is in no module", pc);
      return walk;
    }
    ModuleState& state = installer.state(module);
    std::optional<UnwindRule> rule;
    std::string missing;
    if (state.tables.sframe) {
      auto found = sframe::lookup(*state.tables.sframe, address.GetFileAddress());
      if (found && *found)
        rule = **found;
      else
        missing = found ? fmt::format("no SFrame row covers 0x{:x}", pc) : found.error().to_string();
    } else {
      missing = state.tables.error ? state.tables.error->to_string()
                                   : fmt::format("no SFrame for {}", frame.module);
    }
    if (!rule) {
      // Not ours to unwind (libc's CFI, the vdso): take the caller from LLDB's own frame list.
      walk.frames.push_back(frame);
      auto from_lldb = lldb_caller(*arch, thread, regs);
      if (!from_lldb) {
        walk.end = missing;
        return walk;
      }
      regs = *from_lldb;
      caller = true;
      continue;
    }
    frame.rule = *rule;
    walk.frames.push_back(frame);
    StepOptions options;
    options.trust_all_registers = !caller || frame.rule->signal_frame;
    auto step_result = step(*frame.rule, regs, memory, options);
    if (!step_result) {
      walk.end = step_result.error().to_string();
      return walk;
    }
    if (step_result->outermost) {
      walk.end = "outermost frame";
      return walk;
    }
    auto next_sp = step_result->caller.sp();
    if (!step_result->caller.pc() || *step_result->caller.pc() == 0 || !next_sp ||
        (regs.sp() && *next_sp <= *regs.sp())) {
      walk.end = "stack does not progress";
      return walk;
    }
    regs = step_result->caller;
    caller = !frame.rule->signal_frame;
  }
  walk.end = fmt::format("stopped after {} frames", max_frames);
  return walk;
}

}  // namespace unwindkit::lldb_plugin
