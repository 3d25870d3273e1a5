// The process memory of a core (private to core_file*.cpp): the bytes of its PT_LOAD
// segments, and behind them the mapped files on disk for pages the core left out (the kernel
// omits unmodified file-backed pages such as .text and .sframe).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/file_bytes.h"
#include "unwindkit/stepper.h"

namespace unwindkit::unwind::detail {

class CoreMemory final : public MemoryReader {
 public:
  // [vaddr, vaddr + bytes.size()) present in the core; `bytes` borrows from the core image.
  void add_core_segment(uint64_t vaddr, Bytes bytes);
  // [start, end) of the process maps `file` from `file_offset`; `file` is the whole file.
  void add_file_mapping(uint64_t start, uint64_t end, uint64_t file_offset,
                        const FileImage& file);
  // Call once after adding everything: sorts for lookup.
  void finish();

  bool read(uint64_t addr, std::span<uint8_t> out) const override;
  // Reads only what the core itself holds (for comparing the core's copy of a file).
  bool read_core(uint64_t addr, std::span<uint8_t> out) const;

 private:
  struct Piece {
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive; bytes [start, end) come from `data`
    Bytes data;
    std::shared_ptr<const void> owner;  // keeps file bytes alive
  };
  // The longest run of bytes available at `addr` from one piece, or nullopt.
  static std::optional<Bytes> at(const std::vector<Piece>& pieces, uint64_t addr);
  static bool read_from(const std::vector<Piece>& first, const std::vector<Piece>* second,
                        uint64_t addr, std::span<uint8_t> out);

  std::vector<Piece> core_;
  std::vector<Piece> files_;
};

}  // namespace unwindkit::unwind::detail
