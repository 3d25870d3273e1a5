// What the GDB unwinder asks of the core: which module covers a PC, the rule there, and the
// caller's registers from the one stepper. Also keeps the counts that
// `unwindkit status` shows. Holds no GDB state: registers come in as numbers, memory through
// a MemoryReader.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "loaded_module.h"
#include "unwindkit/stepper.h"

namespace unwindkit::gdb {

// The frame is not ours to unwind (no module, no table, no row, or GDB has CFI for it).
struct Declined {};

struct Stepped {
  const LoadedModule* module = nullptr;
  UnwindRule rule;
  StepResult result;
};

struct Failed {
  Error error;
};

using FrameOutcome = std::variant<Declined, Stepped, Failed>;

class FrameEngine {
 public:
  void add(std::shared_ptr<LoadedModule> module) { modules_.push_back(std::move(module)); }
  void clear() { modules_.clear(); }
  const std::vector<std::shared_ptr<LoadedModule>>& modules() const { return modules_; }
  const LoadedModule* module_for(uint64_t pc) const;

  bool prefer_sframe = false;  // claim frames even where GDB has DWARF CFI

  // One frame for GDB's unwinder. `level` 0 is the innermost frame (every register in
  // `regs` trustworthy; above it, `regs.pc()` is a return address and looked up at pc - 1).
  FrameOutcome unwind(unsigned level, const RegisterSet& regs, const MemoryReader& mem);

  // Counters and recent problems for `unwindkit status`.
  uint64_t claimed() const { return claimed_; }
  uint64_t failed() const { return failed_; }
  const std::deque<std::string>& recent_errors() const { return recent_errors_; }
  void record_error(std::string message);

 private:
  // The rule for a frame, or why there is none (Declined when no table covers the PC or
  // GDB has CFI there and CFI is preferred).
  std::variant<Declined, UnwindRule, Failed> rule_for(uint64_t lookup_pc,
                                                      const LoadedModule** module) const;

  std::vector<std::shared_ptr<LoadedModule>> modules_;
  uint64_t claimed_ = 0;
  uint64_t failed_ = 0;
  std::deque<std::string> recent_errors_;
};

}  // namespace unwindkit::gdb
