// The `unwindkit` command-line tool: one binary, one subcommand group per format.
// Each group lives in its own <format>_cmd.cpp and is registered in main.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/elf/file_pieces.h"

namespace unwindkit::cli {

// Exit codes, the same for every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitDataProblem = 1;  // the input is bad, missing a table, or a check failed
inline constexpr int kExitUsage = 2;        // the command line is wrong

// Each registrar adds its subcommands to `app`; a subcommand's callback stores its exit
// code in `exit_code`.
using Registrar = void (*)(CLI::App& app, int& exit_code);

void add_sframe_commands(CLI::App& app, int& exit_code);           // sframe_cmd.cpp
void add_bt_command(CLI::App& app, int& exit_code);                // bt_cmd.cpp
void add_compact_unwind_commands(CLI::App& app, int& exit_code);   // compact_unwind_cmd.cpp
void add_dump_command(CLI::App& app, int& exit_code);              // dump_cmd.cpp
void add_trace_commands(CLI::App& app, int& exit_code);            // trace_cmd.cpp
void add_cbf_commands(CLI::App& app, int& exit_code);              // cbf_cmd.cpp
void add_debuginfod_command(CLI::App& app, int& exit_code);        // debuginfod_cmd.cpp
void add_setup_command(CLI::App& app, int& exit_code);             // setup_cmd.cpp
// `sframe verify`, `convert` and `build` join the `sframe` group, so they are registered after
// add_sframe_commands.
void add_sframe_verify_command(CLI::App& app, int& exit_code);     // sframe_verify_cmd.cpp
void add_sframe_convert_command(CLI::App& app, int& exit_code);    // sframe_convert_cmd.cpp
void add_sframe_build_command(CLI::App& app, int& exit_code);      // sframe_build_cmd.cpp

// `sframe check --registers` (sframe_registers_cmd.cpp), for the check subcommand.
int run_check_registers(const std::string& path, bool as_json);

// Parses "0x401000", "401000h" is not accepted; plain decimal is.
bool parse_address(const std::string& text, uint64_t& out);
// CLI11 validator for addresses, so a bad address is a usage error (exit 2).
const CLI::Validator& address_validator();
// The `sframe` subcommand group, made if no registrar has made it yet.
CLI::App* sframe_group(CLI::App& app);
// Reads a whole file; on failure prints "unwindkit: <path>: <reason>" and returns false.
bool read_whole_file(const std::string& path, std::vector<uint8_t>& out);
// Writes `image` to `out` with the permissions of `in` (a rewritten copy of it); a copy onto
// `in` itself, whose mapped bytes the image refers to, through a file beside it renamed over
// it. On failure prints "unwindkit: <out>: cannot write: <why>" and returns false.
bool write_copy(const std::string& in, const std::string& out, const elf::FilePieces& image);
// Writes one piece of output to stdout as it is (no terminator needed): a streaming sink.
void write_stdout(std::string_view text);

}  // namespace unwindkit::cli
