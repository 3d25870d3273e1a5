#include "unwindkit/cbf/text.h"

#include <fmt/format.h>

#include <array>

namespace unwindkit::cbf {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::string_view kBase64Standard =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Both alphabets decode: '+' and '-' are 62, '/' and '_' are 63.
int base64_value(char c) {
  if (c == '-') return 62;
  if (c == '_') return 63;
  const size_t i = kBase64Standard.find(c);
  return i == std::string_view::npos ? -1 : static_cast<int>(i);
}

}  // namespace

Result<std::vector<uint8_t>> from_hex(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  if (text.substr(i, 2) == "0x" || text.substr(i, 2) == "0X") i += 2;
  std::vector<uint8_t> out;
  int high = -1;
  for (; i < text.size(); ++i) {
    if (is_space(text[i])) {
      if (high >= 0) return fail("hex", i, "digit", "a byte needs two hex digits");
      continue;
    }
    const int v = hex_value(text[i]);
    if (v < 0) return fail("hex", i, "digit", fmt::format("'{}' is not a hex digit", text[i]));
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<uint8_t>(high << 4 | v));
      high = -1;
    }
  }
  if (high >= 0) return fail("hex", text.size(), "digit", "odd number of hex digits");
  return out;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  std::string s;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i != 0) s += ' ';
    s += fmt::format("{:02x}", bytes[i]);
  }
  return s;
}

Result<std::vector<uint8_t>> from_base64(std::string_view text) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  unsigned bits = 0;
  size_t padding_at = std::string_view::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    if (c == '=') {
      if (padding_at == std::string_view::npos) padding_at = i;
      continue;
    }
    if (padding_at != std::string_view::npos)
      return fail("base64", i, "character", "data after '=' padding");
    const int v = base64_value(c);
    if (v < 0) return fail("base64", i, "character", fmt::format("'{}' is not base64", c));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  // 6 leftover bits mean one character too many (4n+1 characters): not a byte count.
  if (bits >= 6) return fail("base64", text.size(), "length", "a lone trailing character");
  return out;
}

std::string to_base64(std::span<const uint8_t> bytes) {
  std::string s;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (uint8_t b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      s += kBase64Standard[(acc >> bits) & 0x3f];
    }
    acc &= (1u << bits) - 1;
  }
  if (bits > 0) s += kBase64Standard[(acc << (6 - bits)) & 0x3f];
  return s;
}

}  // namespace unwindkit::cbf
