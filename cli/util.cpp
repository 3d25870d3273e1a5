#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "unwindkit/file_bytes.h"

namespace unwindkit::cli {

bool parse_address(const std::string& text, uint64_t& out) {
  if (text.empty()) return false;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* begin = text.c_str() + (hex ? 2 : 0);
  if (*begin == '\0' || *begin == '-' || *begin == '+') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(begin, &end, hex ? 16 : 10);
  if (errno != 0 || end == nullptr || *end != '\0') return false;
  out = v;
  return true;
}

const CLI::Validator& address_validator() {
  static const CLI::Validator v(
      [](std::string& s) {
        uint64_t ignored = 0;
        return parse_address(s, ignored) ? std::string() : "not an address: " + s;
      },
      "ADDR");
  return v;
}

CLI::App* sframe_group(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App* s) { return s->get_name() == "sframe"; }))
    return sub;
  return app.add_subcommand("sframe", "SFrame sections");
}

void write_stdout(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

bool read_whole_file(const std::string& path, std::vector<uint8_t>& out) {
  auto bytes = read_file(path);
  if (!bytes) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(), bytes.error().message.c_str());
    return false;
  }
  out = std::move(*bytes);
  return true;
}

bool write_copy(const std::string& in, const std::string& out_path,
                const std::vector<uint8_t>& image) {
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "unwindkit: %s: cannot write\n", out_path.c_str());
    return false;
  }
  // A rewritten executable or library should still run: keep the input's permissions.
  std::error_code ec;
  std::filesystem::permissions(out_path, std::filesystem::status(in, ec).permissions(), ec);
  return true;
}

}  // namespace unwindkit::cli
