// SFrame of the module holding the frame (only a section that passes the strict checks).
#include "module_table_source.h"
#include "sources.h"

namespace unwindkit::unwind::sources {

std::shared_ptr<const RuleSource> sframe() {
  return std::make_shared<ModuleTableSource<Source::SFrame, &Module::sframe_rule>>();
}

}  // namespace unwindkit::unwind::sources
