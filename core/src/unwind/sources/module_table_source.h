// A rule source backed by one of a Module's tables: asks the module holding the frame.
#pragma once

#include <fmt/format.h>

#include "unwindkit/unwind/modules.h"
#include "unwindkit/unwind/rule_source.h"

namespace unwindkit::unwind::sources {

template <Source Kind, Result<std::optional<UnwindRule>> (Module::*Lookup)(uint64_t)>
class ModuleTableSource final : public RuleSource {
 public:
  Source kind() const override { return Kind; }
  Result<std::optional<UnwindRule>> rule(const RuleQuery& q) const override {
    const uint64_t at = q.address.lookup_address();
    if (q.module == nullptr)
      return fail("modules", at, "pc", fmt::format("pc {:#x} is in no known module", at));
    return (q.module->*Lookup)(at);
  }
};

}  // namespace unwindkit::unwind::sources
