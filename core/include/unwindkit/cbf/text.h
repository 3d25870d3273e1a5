// Text carriers of CBF bytes: hex, and the base64 a Swift `Backtrace` is Codable as
// (standard alphabet, no `=` padding; the URL-safe alphabet is accepted when reading).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/error.h"

namespace unwindkit::cbf {

// Hex digits, whitespace between bytes ignored; an optional "0x" prefix.
Result<std::vector<uint8_t>> from_hex(std::string_view text);
std::string to_hex(std::span<const uint8_t> bytes);  // "02 11 10 ..."

// Standard or URL-safe alphabet, padding optional; whitespace ignored.
Result<std::vector<uint8_t>> from_base64(std::string_view text);
std::string to_base64(std::span<const uint8_t> bytes);  // standard alphabet, no padding

}  // namespace unwindkit::cbf
