// CBF text carriers: hex and base64 (RFC 4648 test vectors, without padding as Swift writes).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unwindkit/cbf/text.h"

namespace unwindkit::cbf {
namespace {

std::vector<uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }

TEST(CbfText, Base64Rfc4648Vectors) {
  const std::pair<const char*, const char*> v[] = {{"", ""},         {"f", "Zg"},
                                                   {"fo", "Zm8"},    {"foo", "Zm9v"},
                                                   {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"},
                                                   {"foobar", "Zm9vYmFy"}};
  for (auto [plain, b64] : v) {
    EXPECT_EQ(to_base64(bytes(plain)), b64);
    EXPECT_EQ(*from_base64(b64), bytes(plain));
    EXPECT_EQ(*from_base64(std::string(b64) + (std::string(b64).size() % 4 == 2   ? "=="
                                               : std::string(b64).size() % 4 == 3 ? "="
                                                                                  : "")),
              bytes(plain));
  }
}

TEST(CbfText, Base64AcceptsUrlSafeAlphabet) {
  // 0xfb 0xff is "+/8" in the standard alphabet and "-_8" in the URL-safe one.
  EXPECT_EQ(to_base64(std::vector<uint8_t>{0xfb, 0xff}), "+/8");
  EXPECT_EQ(*from_base64("-_8"), (std::vector<uint8_t>{0xfb, 0xff}));
}

TEST(CbfText, Base64Errors) {
  auto bad = from_base64("Zm9v*");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().offset, 4u);
  EXPECT_FALSE(from_base64("Zm9vY"));   // 4n+1 characters
  EXPECT_FALSE(from_base64("Zg==Zg"));  // data after padding
}

TEST(CbfText, Hex) {
  EXPECT_EQ(*from_hex("02 18 7f"), (std::vector<uint8_t>{0x02, 0x18, 0x7f}));
  EXPECT_EQ(*from_hex("0x02187F\n"), (std::vector<uint8_t>{0x02, 0x18, 0x7f}));
  EXPECT_EQ(to_hex(std::vector<uint8_t>{0x02, 0xab}), "02 ab");
  auto odd = from_hex("021");
  ASSERT_FALSE(odd);
  auto bad = from_hex("02 zz");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().offset, 3u);
  EXPECT_FALSE(from_hex("0 2"));
}

}  // namespace
}  // namespace unwindkit::cbf
