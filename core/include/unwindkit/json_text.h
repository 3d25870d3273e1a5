// JSON text helpers for the core's --json dumpers. The core writes JSON as text (it does not
// link a JSON library; the CLI parses it back with nlohmann-json where it needs a value).
#pragma once

#include <string>
#include <string_view>

namespace unwindkit {

// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

}  // namespace unwindkit
