// Command-line options of the `unwindkit` commands (see options.h).
#include "options.h"

#include <cstdint>
#include <cctype>
#include <cstdlib>

namespace unwindkit::lldb_plugin {

ParsedArgs parse_args(char** argv, std::span<const OptionSpec> specs) {
  ParsedArgs out;
  for (size_t i = 0; argv != nullptr && argv[i] != nullptr; ++i) {
    std::string arg = argv[i];
    const OptionSpec* spec = nullptr;
    std::string value;
    bool inline_value = false;
    if (arg.starts_with("--") && arg.size() > 2) {
      std::string name = arg.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
        inline_value = true;
      }
      for (const auto& s : specs)
        if (name == s.long_name) spec = &s;
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-' && !std::isdigit(arg[1])) {
      for (const auto& s : specs)
        if (s.short_name == arg[1]) spec = &s;
      if (arg.size() > 2) {
        value = arg.substr(2);
        inline_value = true;
      }
    } else {
      out.positional.push_back(arg);
      continue;
    }
    if (spec == nullptr) {
      out.error = "unknown option '" + arg + "'";
      return out;
    }
    if (spec->takes_value && !inline_value) {
      if (argv[i + 1] == nullptr) {
        out.error = "option '" + arg + "' needs a value";
        return out;
      }
      value = argv[++i];
    } else if (!spec->takes_value && inline_value) {
      out.error = "option '" + arg + "' takes no value";
      return out;
    }
    out.values[spec->long_name] = value;
  }
  return out;
}

bool parse_number(const std::string& text, uint64_t& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtoull(text.c_str(), &end, 0);
  return end != nullptr && *end == '\0';
}

}  // namespace unwindkit::lldb_plugin
