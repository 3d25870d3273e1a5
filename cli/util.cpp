#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

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

namespace {

bool write_all(int fd, Bytes bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // nothing written, and no error said why
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return true;
}

// `image` into `fd`: runs of zeros as holes in a regular file (a hostile p_align may ask for
// gigabytes of them), written out anywhere else.
bool write_pieces(int fd, const elf::FilePieces& image) {
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  static constexpr std::array<uint8_t, 64 * 1024> kZeros{};
  const auto zeros = [&](uint64_t n) {
    if (regular) return ::lseek(fd, static_cast<off_t>(n), SEEK_CUR) >= 0;
    for (; n != 0; n -= std::min<uint64_t>(n, kZeros.size()))
      if (!write_all(fd, Bytes(kZeros.data(), std::min<uint64_t>(n, kZeros.size())))) return false;
    return true;
  };
  return image.write([fd](Bytes b) { return write_all(fd, b); }, zeros) &&
         (!regular || ::ftruncate(fd, static_cast<off_t>(image.size())) == 0);
}

}  // namespace

bool write_copy(const std::string& in, const std::string& out_path, const elf::FilePieces& image) {
  namespace fs = std::filesystem;
  // `image` refers to `in`'s mapped bytes: rewritten in place, that file would change (or,
  // truncated, fault) while it is read. A copy onto it is written beside it and renamed over
  // it; any other output is written where it is, as it always was (a device or a pipe too).
  std::error_code ec;
  const bool onto_input = fs::equivalent(in, out_path, ec);  // false for a new file
  fs::path out = out_path;
  if (onto_input) {  // over the file itself: a symbolic link to it stays one
    if (fs::path target = fs::canonical(out_path, ec); !ec) out = target;
  }
  fs::path written = out;
  if (onto_input) written += ".unwindkit-tmp-" + std::to_string(::getpid());
  const int fd = ::open(written.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  std::string why;
  if (fd < 0) {
    why = std::strerror(errno);
  } else {
    if (!write_pieces(fd, image)) why = std::strerror(errno);
    if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
    // A rewritten executable or library should still run: keep the input's permissions.
    const fs::perms perms = fs::status(in, ec).permissions();
    if (why.empty() && !ec) fs::permissions(written, perms, ec);
    if (why.empty() && onto_input) {
      fs::rename(written, out, ec);
      if (ec) why = ec.message();
    }
    if (!why.empty() && onto_input) fs::remove(written, ec);
  }
  if (why.empty()) return true;
  std::fprintf(stderr, "unwindkit: %s: cannot write: %s\n", out_path.c_str(), why.c_str());
  return false;
}

}  // namespace unwindkit::cli
