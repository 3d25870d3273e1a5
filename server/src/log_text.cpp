// Log-safe text (see log_text.h).
#include "log_text.h"

#include <fmt/format.h>

#include <iterator>

namespace unwindkit::server {

std::string escaped_for_log(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '\\')
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", byte);
    else
      out += c;
  }
  return out;
}

}  // namespace unwindkit::server
