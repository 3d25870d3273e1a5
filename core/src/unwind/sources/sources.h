// The built-in rule sources (rule_source.h), one file each; registry.cpp lists them.
#pragma once

#include <memory>

#include "unwindkit/unwind/rule_source.h"

namespace unwindkit::unwind::sources {

std::shared_ptr<const RuleSource> cfi();
std::shared_ptr<const RuleSource> sframe();
std::shared_ptr<const RuleSource> compact_unwind();
std::shared_ptr<const RuleSource> frame_pointer();
std::shared_ptr<const RuleSource> entry_point();

}  // namespace unwindkit::unwind::sources
