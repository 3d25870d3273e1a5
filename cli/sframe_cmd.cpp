// PLACEHOLDER until the SFrame commands are written: registers nothing.
#include "commands.h"
namespace unwindkit::cli {
void add_sframe_commands(CLI::App& app, int& exit_code) { (void)app; (void)exit_code; }
}  // namespace unwindkit::cli
