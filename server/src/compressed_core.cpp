// Compressed cores (see compressed_core.h).
#include "compressed_core.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <lz4frame.h>
#include <lzma.h>
#include <unistd.h>
#include <zstd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

namespace unwindkit::server {
namespace {

constexpr std::string_view kSection = "core";
constexpr size_t kChunk = size_t{1} << 20;  // read and written a mebibyte at a time
constexpr std::array<uint8_t, 4> kZstdMagic = {0x28, 0xb5, 0x2f, 0xfd};
constexpr std::array<uint8_t, 6> kXzMagic = {0xfd, '7', 'z', 'X', 'Z', 0x00};
constexpr std::array<uint8_t, 4> kLz4Magic = {0x04, 0x22, 0x4d, 0x18};

template <size_t N>
bool starts_with(const std::array<uint8_t, 6>& head, const std::array<uint8_t, N>& magic) {
  return std::equal(magic.begin(), magic.end(), head.begin());
}

// Feeds the compressed file through `step` (in, in_size, out, out_capacity) -> (consumed,
// produced, finished or error) and writes what comes out, bounded.
struct Step {
  size_t consumed = 0, produced = 0;
  bool finished = false;
  std::string error;  // non-empty: the library's reason
};

template <typename Decode>
Result<UniqueFd> run(const std::string& path, uint64_t max_size, Decode decode) {
  const std::string name = std::filesystem::path(path).filename().string();
  UniqueFd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) return fail(ErrorKind::Io, kSection, 0, name, std::strerror(errno));
  const std::string tmp = std::filesystem::temp_directory_path().string();
  UniqueFd out(::open(tmp.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!out) return fail(ErrorKind::Io, kSection, 0, name, fmt::format("no temporary file in {}: {}", tmp, std::strerror(errno)));
  std::vector<uint8_t> input(kChunk), output(kChunk);
  size_t have = 0, at = 0;
  uint64_t written = 0, read_total = 0;
  bool eof = false;
  for (;;) {
    if (at == have && !eof) {
      const ssize_t n = ::read(in.get(), input.data(), input.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail(ErrorKind::Io, kSection, read_total, name, std::strerror(errno));
      have = static_cast<size_t>(n);
      at = 0;
      eof = n == 0;
      read_total += have;
    }
    const Step step = decode(input.data() + at, have - at, output.data(), output.size(), eof);
    if (!step.error.empty()) return fail(kSection, read_total, name, step.error);
    at += step.consumed;
    written += step.produced;
    if (written > max_size)
      return fail(ErrorKind::Unsupported, kSection, read_total, name,
                  fmt::format("over {} bytes decompressed (--max-file-mib)", max_size));
    for (size_t done = 0; done < step.produced;) {
      const ssize_t n = ::write(out.get(), output.data() + done, step.produced - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail(ErrorKind::Io, kSection, written, name, std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    if (step.finished) return out;
    if (eof && at == have && step.produced == 0)
      return fail(ErrorKind::Truncated, kSection, read_total, name, "the compressed stream ends early");
  }
}

}  // namespace

Compression compression_of(const std::string& path) {
  std::array<uint8_t, 6> head{};
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd || ::read(fd.get(), head.data(), head.size()) != static_cast<ssize_t>(head.size()))
    return Compression::None;
  if (starts_with(head, kZstdMagic)) return Compression::Zstd;
  if (starts_with(head, kXzMagic)) return Compression::Xz;
  if (starts_with(head, kLz4Magic)) return Compression::Lz4;
  return Compression::None;
}

Result<UniqueFd> decompress(const std::string& path, Compression compression, uint64_t max_size) {
  switch (compression) {
    case Compression::Zstd: {
      const std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> z(ZSTD_createDStream(), &ZSTD_freeDStream);
      if (!z) return fail(ErrorKind::Io, kSection, 0, path, "no memory for zstd");
      return run(path, max_size, [&](const uint8_t* in, size_t in_size, uint8_t* out, size_t cap, bool) {
        ZSTD_inBuffer src{in, in_size, 0};
        ZSTD_outBuffer dst{out, cap, 0};
        const size_t rc = ZSTD_decompressStream(z.get(), &dst, &src);
        Step s{src.pos, dst.pos, rc == 0, ZSTD_isError(rc) ? ZSTD_getErrorName(rc) : ""};
        return s;
      });
    }
    case Compression::Xz: {
      lzma_stream x = LZMA_STREAM_INIT;
      if (lzma_stream_decoder(&x, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
        return fail(ErrorKind::Io, kSection, 0, path, "no memory for liblzma");
      const std::unique_ptr<lzma_stream, decltype(&lzma_end)> owner(&x, &lzma_end);
      return run(path, max_size, [&](const uint8_t* in, size_t in_size, uint8_t* out, size_t cap, bool eof) {
        x.next_in = in;
        x.avail_in = in_size;
        x.next_out = out;
        x.avail_out = cap;
        const lzma_ret rc = lzma_code(&x, eof ? LZMA_FINISH : LZMA_RUN);
        Step s{in_size - x.avail_in, cap - x.avail_out, rc == LZMA_STREAM_END, ""};
        if (rc != LZMA_OK && rc != LZMA_STREAM_END && rc != LZMA_BUF_ERROR)
          s.error = fmt::format("liblzma error {}", static_cast<int>(rc));
        return s;
      });
    }
    case Compression::Lz4: {
      LZ4F_dctx* raw = nullptr;
      if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)))
        return fail(ErrorKind::Io, kSection, 0, path, "no memory for liblz4");
      const std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> l(raw, &LZ4F_freeDecompressionContext);
      return run(path, max_size, [&](const uint8_t* in, size_t in_size, uint8_t* out, size_t cap, bool) {
        size_t out_size = cap, used = in_size;
        const size_t rc = LZ4F_decompress(l.get(), out, &out_size, in, &used, nullptr);
        Step s{used, out_size, rc == 0, LZ4F_isError(rc) ? LZ4F_getErrorName(rc) : ""};
        return s;
      });
    }
    case Compression::None: break;
  }
  return fail(ErrorKind::Unsupported, kSection, 0, path, "not compressed");
}

}  // namespace unwindkit::server
