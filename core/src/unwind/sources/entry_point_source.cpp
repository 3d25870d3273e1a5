// The program's entry point (`_start`): outermost, whatever table covers it or not. Asked
// after the tables, so a program whose own CFI or SFrame covers e_entry says it there.
#include "module_table_source.h"
#include "sources.h"

namespace unwindkit::unwind::sources {

std::shared_ptr<const RuleSource> entry_point() {
  return std::make_shared<ModuleTableSource<Source::EntryPoint, &Module::entry_point_rule>>();
}

}  // namespace unwindkit::unwind::sources
