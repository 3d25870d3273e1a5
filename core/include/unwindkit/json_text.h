// JSON text helpers for the core's --json dumpers that write JSON as text (the SFrame report,
// with its sorted, indented documents, builds them with nlohmann-json instead).
#pragma once

#include <string>
#include <string_view>

namespace unwindkit {

// `s` as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

}  // namespace unwindkit
