// What the GDB unwinder asks of the core, frame by frame: the core's FrameStepper (the
// walker's own loop body) over the modules GDB has loaded, described by the core's one module
// model. Also keeps the counts that `unwindkit status` shows. Holds no GDB state: registers
// come in as numbers, memory through a MemoryReader.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "unwindkit/unwind/modules.h"
#include "unwindkit/unwind/walker.h"

namespace unwindkit::gdb {

class FrameEngine {
 public:
  FrameEngine();

  void add(std::shared_ptr<unwind::Module> module);
  void clear();
  const std::vector<std::shared_ptr<unwind::Module>>& modules() const { return modules_.modules(); }
  const unwind::ModuleMap& module_map() const { return modules_; }
  std::shared_ptr<unwind::Module> module_for(uint64_t pc) const { return modules_.find_shared(pc); }

  // Claim frames even where GDB has DWARF CFI (else CFI frames are left to GDB).
  bool prefer_sframe() const { return prefer_sframe_; }
  void set_prefer_sframe(bool prefer);

  // One frame for GDB's unwinder: the core's step, or nullopt when the frame is not ours
  // (no table, GDB's own CFI covers it, or the step failed: recorded for `status`).
  std::optional<unwind::StepOutcome> unwind(unsigned level, const RegisterSet& regs,
                                            const MemoryReader& mem);

  // Whether a step of ours ended the stack at a frame with this pc: its rule says the return
  // address is undefined (the program's entry point, SFrame v3's outermost marker). GDB 13's
  // Python API cannot end a walk (GDB then guesses past such a frame), so the plugin's frame
  // filter ends `bt` there.
  bool ended_at(uint64_t pc) const { return ended_at_.contains(pc); }
  bool ended_any() const { return !ended_at_.empty(); }

  // Counters and recent problems for `unwindkit status`.
  uint64_t claimed() const { return claimed_; }
  uint64_t failed() const { return failed_; }
  const std::deque<std::string>& recent_errors() const { return recent_errors_; }
  void record_error(std::string message);

 private:
  unwind::ModuleMap modules_;
  bool prefer_sframe_ = false;
  unwind::WalkOptions options_;
  std::optional<unwind::FrameStepper> stepper_;
  const MemoryReader* stepper_memory_ = nullptr;
  uint64_t claimed_ = 0;
  uint64_t failed_ = 0;
  std::deque<std::string> recent_errors_;
  std::unordered_set<uint64_t> ended_at_;
};

}  // namespace unwindkit::gdb
