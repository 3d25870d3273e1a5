// Text a client chose (a request's path, a reason quoting it) made safe for a log line: a
// control character cannot start a forged line or move the terminal's cursor.
#pragma once

#include <string>
#include <string_view>

namespace unwindkit::server {

// `text` with every byte below 0x20, 0x7f and the backslash written as \xNN.
std::string escaped_for_log(std::string_view text);

}  // namespace unwindkit::server
