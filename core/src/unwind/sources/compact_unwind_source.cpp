// Apple compact unwind (__unwind_info, or an object's __compact_unwind) of the Mach-O image
// holding the frame; DWARF-mode entries hand over to the image's __eh_frame.
#include "module_table_source.h"
#include "sources.h"

namespace unwindkit::unwind::sources {

std::shared_ptr<const RuleSource> compact_unwind() {
  return std::make_shared<ModuleTableSource<Source::CompactUnwind, &Module::compact_unwind_rule>>();
}

}  // namespace unwindkit::unwind::sources
