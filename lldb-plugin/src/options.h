// Argument parsing for the `unwindkit` commands: LLDB hands a raw argv to SB plugin commands,
// so options (-m MODULE / --module MODULE, --json) are recognised here.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace unwindkit::lldb_plugin {

struct OptionSpec {
  char short_name;        // 0: long form only
  const char* long_name;  // the key in ParsedArgs::values
  bool takes_value;
};

struct ParsedArgs {
  std::map<std::string, std::string> values;  // long name → value ("" for flags)
  std::vector<std::string> positional;
  std::string error;  // non-empty: the command line was not understood

  bool has(const std::string& name) const { return values.contains(name); }
  std::string get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::string() : it->second;
  }
};

ParsedArgs parse_args(char** argv, std::span<const OptionSpec> specs);

// Parses a number the way LLDB users type it: 0x-prefixed hex or decimal.
bool parse_number(const std::string& text, uint64_t& out);

}  // namespace unwindkit::lldb_plugin
