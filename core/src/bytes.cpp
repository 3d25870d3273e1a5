#include "unwindkit/bytes.h"

#include <fmt/format.h>

namespace unwindkit {

std::string Error::to_string() const {
  return fmt::format("{}+{:#x}: {}: {}", section, offset, field, message);
}

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadValue: return "bad value";
    case ErrorKind::Truncated: return "truncated";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::NotFound: return "not found";
    case ErrorKind::UnreadableMemory: return "unreadable memory";
    case ErrorKind::UnknownRegister: return "unknown register";
    case ErrorKind::Io: return "i/o";
  }
  return "unknown";
}

tl::unexpected<Error> fail(ErrorKind kind, std::string_view section, uint64_t offset,
                           std::string_view field, std::string message) {
  return tl::unexpected(
      Error{std::string(section), offset, std::string(field), std::move(message), kind});
}

tl::unexpected<Error> fail(std::string_view section, uint64_t offset, std::string_view field,
                           std::string message) {
  return fail(ErrorKind::BadValue, section, offset, field, std::move(message));
}

tl::unexpected<Error> ByteReader::error(std::string_view field, std::string message) const {
  return error_at(pos_, field, std::move(message));
}

tl::unexpected<Error> ByteReader::error_at(size_t pos, std::string_view field,
                                           std::string message) const {
  return fail(section_, base_ + pos, field, std::move(message));
}

tl::unexpected<Error> ByteReader::short_at(size_t pos, std::string_view field,
                                           std::string message) const {
  return fail(ErrorKind::Truncated, section_, base_ + pos, field, std::move(message));
}

Result<void> ByteReader::seek(size_t pos, std::string_view field) {
  if (pos > data_.size())
    return short_at(pos, field,
                    fmt::format("offset {:#x} is past the end ({:#x} bytes)", pos, data_.size()));
  pos_ = pos;
  return {};
}

Result<void> ByteReader::skip(size_t n, std::string_view field) {
  if (n > remaining())
    return short_at(pos_, field, fmt::format("needs {} bytes, {} left", n, remaining()));
  pos_ += n;
  return {};
}

tl::unexpected<Error> ByteReader::bad_read(size_t pos, size_t width, std::string_view field) const {
  if (width != 1 && width != 2 && width != 4 && width != 8)
    return error_at(pos, field, fmt::format("unsupported width {}", width));
  return short_at(pos, field,
                  fmt::format("needs {} bytes, {} left", width,
                              pos > data_.size() ? 0 : data_.size() - pos));
}

Result<uint64_t> ByteReader::uint(size_t width, std::string_view field) {
  auto v = raw_at(pos_, width, field);
  if (v) pos_ += width;
  return v;
}

Result<int64_t> ByteReader::sint(size_t width, std::string_view field) {
  auto v = sint_at(pos_, width, field);
  if (v) pos_ += width;
  return v;
}

Result<uint8_t> ByteReader::u8(std::string_view f) {
  return uint(1, f).map([](uint64_t v) { return static_cast<uint8_t>(v); });
}
Result<uint16_t> ByteReader::u16(std::string_view f) {
  return uint(2, f).map([](uint64_t v) { return static_cast<uint16_t>(v); });
}
Result<uint32_t> ByteReader::u32(std::string_view f) {
  return uint(4, f).map([](uint64_t v) { return static_cast<uint32_t>(v); });
}
Result<uint64_t> ByteReader::u64(std::string_view f) { return uint(8, f); }
Result<int8_t> ByteReader::i8(std::string_view f) {
  return sint(1, f).map([](int64_t v) { return static_cast<int8_t>(v); });
}
Result<int16_t> ByteReader::i16(std::string_view f) {
  return sint(2, f).map([](int64_t v) { return static_cast<int16_t>(v); });
}
Result<int32_t> ByteReader::i32(std::string_view f) {
  return sint(4, f).map([](int64_t v) { return static_cast<int32_t>(v); });
}
Result<int64_t> ByteReader::i64(std::string_view f) { return sint(8, f); }

Result<Bytes> ByteReader::bytes(size_t n, std::string_view field) {
  if (n > remaining())
    return short_at(pos_, field, fmt::format("needs {} bytes, {} left", n, remaining()));
  Bytes out = data_.subspan(pos_, n);
  pos_ += n;
  return out;
}

Result<ByteReader> ByteReader::sub(size_t pos, size_t n, std::string_view field) const {
  if (pos > data_.size() || n > data_.size() - pos)
    return short_at(pos, field,
                    fmt::format("range [{:#x}, {:#x}) is outside the {:#x} bytes of data", pos,
                                static_cast<uint64_t>(pos) + n, data_.size()));
  return ByteReader(data_.subspan(pos, n), endian_, section_, base_ + pos);
}

}  // namespace unwindkit
