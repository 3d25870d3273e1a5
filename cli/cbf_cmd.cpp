// PLACEHOLDER until this command group is written: registers nothing.
#include "commands.h"
namespace unwindkit::cli {
void add_cbf_commands(CLI::App& app, int& exit_code) { (void)app; (void)exit_code; }
}  // namespace unwindkit::cli
