// Where the walker gets rules from. A rule source answers one question — "the rule for the
// frame at this address" — from one kind of table; the frame stepper (frame_step.h) asks the
// sources in order and is the only code that applies a rule. Built-in sources are listed once,
// in sources/registry.cpp; a front end may add its own RuleSource to WalkOptions::sources.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/stepper.h"
#include "unwindkit/unwind/code_address.h"

namespace unwindkit::unwind {

class Module;

struct RuleQuery {
  CodeAddress address;
  Module* module = nullptr;  // the module holding address.lookup_address(), if any
  const RegisterSet& regs;   // the frame's registers
};

class RuleSource {
 public:
  virtual ~RuleSource() = default;
  virtual Source kind() const = 0;
  // The rule at q.address.lookup_address() (function range in run-time addresses); nullopt
  // when this source has nothing there; an error when its table cannot be read.
  virtual Result<std::optional<UnwindRule>> rule(const RuleQuery& q) const = 0;
};

using RuleSources = std::vector<std::shared_ptr<const RuleSource>>;

// The built-in source of each kind, in the order given.
RuleSources builtin_sources(std::span<const Source> kinds);
inline RuleSources builtin_sources(std::initializer_list<Source> kinds) {
  return builtin_sources(std::span<const Source>(kinds.begin(), kinds.size()));
}

}  // namespace unwindkit::unwind
