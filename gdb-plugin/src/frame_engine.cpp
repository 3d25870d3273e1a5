#include "frame_engine.h"

#include <fmt/format.h>

namespace unwindkit::gdb {

namespace {

constexpr size_t kRecentErrorsKept = 16;

// A caller frame's PC is a return address, which may lie just past the end of its function
// (a call as the last instruction of a noreturn function): look up the call instruction.
uint64_t lookup_pc(unsigned level, uint64_t pc) { return level == 0 ? pc : pc - 1; }

}  // namespace

const LoadedModule* FrameEngine::module_for(uint64_t pc) const {
  for (const auto& m : modules_)
    if (m->contains(pc)) return m.get();
  return nullptr;
}

std::variant<Declined, UnwindRule, Failed> FrameEngine::rule_for(
    uint64_t pc, const LoadedModule** module) const {
  const LoadedModule* m = module_for(pc);
  *module = m;
  if (m == nullptr || m->sframe() == nullptr) return Declined{};
  auto rule = m->lookup(pc);
  if (!rule) return Failed{rule.error()};
  if (!*rule) return Declined{};
  if (!prefer_sframe && m->has_cfi_at(pc)) return Declined{};
  return std::move(**rule);
}

FrameOutcome FrameEngine::unwind(unsigned level, const RegisterSet& regs,
                                 const MemoryReader& mem) {
  if (!regs.pc()) return Declined{};
  const LoadedModule* module = nullptr;
  auto found = rule_for(lookup_pc(level, *regs.pc()), &module);
  if (std::holds_alternative<Declined>(found)) return Declined{};
  if (auto* failed = std::get_if<Failed>(&found)) {
    ++failed_;
    record_error(fmt::format("{}: pc {:#x}: {}", module->path(), *regs.pc(),
                             failed->error.to_string()));
    return *failed;
  }
  StepOptions options;
  options.trust_all_registers = level == 0;
  const UnwindRule& rule = std::get<UnwindRule>(found);
  auto stepped = step(rule, regs, mem, options);
  if (!stepped) {
    ++failed_;
    record_error(fmt::format("{}: pc {:#x}: {}", module->path(), *regs.pc(),
                             stepped.error().to_string()));
    return Failed{stepped.error()};
  }
  ++claimed_;
  return Stepped{module, rule, std::move(*stepped)};
}

void FrameEngine::record_error(std::string message) {
  if (recent_errors_.size() == kRecentErrorsKept) recent_errors_.pop_front();
  recent_errors_.push_back(std::move(message));
}

}  // namespace unwindkit::gdb
