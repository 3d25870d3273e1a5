// DWARF CFI (.eh_frame, .debug_frame) of the module holding the frame, and of its debug files.
#include "module_table_source.h"
#include "sources.h"

namespace unwindkit::unwind::sources {

std::shared_ptr<const RuleSource> cfi() {
  return std::make_shared<ModuleTableSource<Source::Cfi, &Module::cfi_rule>>();
}

}  // namespace unwindkit::unwind::sources
