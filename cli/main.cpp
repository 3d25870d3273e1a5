#include <array>
#include <cstdio>
#include <string>

#include "commands.h"
#include "unwindkit/version.h"

int main(int argc, char** argv) {
  using namespace unwindkit::cli;
  CLI::App app{"unwindkit: read, check and dump compact stack formats, and unwind with them",
               "unwindkit"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "unwindkit " + std::string(unwindkit::kVersion));

  int exit_code = kExitOk;
  static constexpr std::array<Registrar, 11> registrars = {
      add_sframe_commands,       add_bt_command,             add_compact_unwind_commands,
      add_dump_command,          add_trace_commands,         add_cbf_commands,
      add_sframe_verify_command, add_sframe_convert_command, add_sframe_build_command,
      add_debuginfod_command,    add_setup_command};
  for (Registrar add : registrars) add(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return exit_code;
}
