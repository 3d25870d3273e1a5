// A zero-copy, bounds-checked reader over borrowed bytes (in the manner of gimli's
// EndianSlice). Every read names the field it reads, so a short or bad table yields an
// Error pointing at the exact byte offset and field; nothing reads past the end.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "unwindkit/error.h"

namespace unwindkit {

enum class Endian : uint8_t { Little, Big };

constexpr Endian host_endian() {
  return std::endian::native == std::endian::little ? Endian::Little : Endian::Big;
}

using Bytes = std::span<const uint8_t>;

class ByteReader {
 public:
  // `section` names the table in errors; `base` is the offset of data[0] inside that
  // table, so a reader over a sub-range still reports offsets of the whole table.
  ByteReader(Bytes data, Endian endian, std::string_view section, uint64_t base = 0)
      : data_(data), endian_(endian), section_(section), base_(base) {}

  Endian endian() const { return endian_; }
  std::string_view section() const { return section_; }
  size_t size() const { return data_.size(); }
  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  // Offset of the cursor inside the whole table, for error messages.
  uint64_t table_offset() const { return base_ + pos_; }
  uint64_t table_offset(size_t pos) const { return base_ + pos; }
  Bytes data() const { return data_; }

  Result<void> seek(size_t pos, std::string_view field);
  Result<void> skip(size_t n, std::string_view field);

  // Sequential reads advance the cursor.
  Result<uint8_t> u8(std::string_view field);
  Result<uint16_t> u16(std::string_view field);
  Result<uint32_t> u32(std::string_view field);
  Result<uint64_t> u64(std::string_view field);
  Result<int8_t> i8(std::string_view field);
  Result<int16_t> i16(std::string_view field);
  Result<int32_t> i32(std::string_view field);
  Result<int64_t> i64(std::string_view field);
  // An unsigned/signed integer of 1, 2, 4 or 8 bytes in the reader's byte order.
  Result<uint64_t> uint(size_t width, std::string_view field);
  Result<int64_t> sint(size_t width, std::string_view field);
  Result<Bytes> bytes(size_t n, std::string_view field);

  // Reads at an absolute position inside this reader, leaving the cursor alone.
  [[gnu::always_inline]] Result<uint64_t> uint_at(size_t pos, size_t width, std::string_view field) const {
    return raw_at(pos, width, field);
  }
  [[gnu::always_inline]] Result<int64_t> sint_at(size_t pos, size_t width, std::string_view field) const {
    auto v = raw_at(pos, width, field);
    if (!v) [[unlikely]]
      return tl::unexpected(std::move(v).error());
    return sign_extend(*v, width);
  }

  // A record read field by field with one bounds check: holds() checks that [pos, pos + n)
  // lies inside, and the *_in reads take fields inside a range it held, unchecked each (a
  // table's rows are millions of small records). A range not held is the caller's fault.
  [[gnu::always_inline]] bool holds(size_t pos, size_t n) const {
    return pos <= data_.size() && n <= data_.size() - pos;
  }
  [[gnu::always_inline]] uint64_t uint_in(size_t pos, size_t width) const {
    const uint8_t* at = data_.data() + pos;
    const bool swap = endian_ != host_endian();
    switch (width) {
      case 1: return *at;
      case 2: return load<uint16_t>(at, swap);
      case 4: return load<uint32_t>(at, swap);
      default: return load<uint64_t>(at, swap);
    }
  }
  [[gnu::always_inline]] int64_t sint_in(size_t pos, size_t width) const {
    return sign_extend(uint_in(pos, width), width);
  }

  // A reader over [pos, pos + n) of this one, reporting offsets of the whole table.
  Result<ByteReader> sub(size_t pos, size_t n, std::string_view field) const;

  // An Error at the cursor (or at `pos`) for checks that are not about length (BadValue).
  tl::unexpected<Error> error(std::string_view field, std::string message) const;
  tl::unexpected<Error> error_at(size_t pos, std::string_view field, std::string message) const;
  // A Truncated Error at `pos`: what every read past the end returns.
  tl::unexpected<Error> short_at(size_t pos, std::string_view field, std::string message) const;

 private:
  // Inline: tables are read a field at a time, millions of them in a large section; only the
  // Error is made out of line.
  [[gnu::always_inline]] Result<uint64_t> raw_at(size_t pos, size_t width,
                                                std::string_view field) const {
    if ((width != 1 && width != 2 && width != 4 && width != 8) || pos > data_.size() ||
        width > data_.size() - pos) [[unlikely]]
      return bad_read(pos, width, field);
    return uint_in(pos, width);
  }
  // Two's-complement sign extension of a `width`-byte value, without shifting into the sign
  // bit (UB-free).
  static int64_t sign_extend(uint64_t v, size_t width) {
    if (width == 8) return static_cast<int64_t>(v);
    const uint64_t sign = uint64_t{1} << (width * 8 - 1);
    return static_cast<int64_t>((v ^ sign) - sign);
  }
  // One whole-word load: tables are read a field at a time, millions of them.
  template <class T>
  static uint64_t load(const uint8_t* at, bool swap) {
    T v;
    std::memcpy(&v, at, sizeof v);
    if (!swap) return v;
    if constexpr (sizeof(T) == 2) return __builtin_bswap16(v);
    else if constexpr (sizeof(T) == 4) return __builtin_bswap32(v);
    else return __builtin_bswap64(v);
  }
  // The Error of a read raw_at refuses: an unsupported width, or past the end.
  tl::unexpected<Error> bad_read(size_t pos, size_t width, std::string_view field) const;

  Bytes data_;
  Endian endian_;
  std::string_view section_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace unwindkit
