// A rewritten copy of a file as the pieces it is written from, in order: ranges of the input's
// image, which are not copied, bytes of the copy's own (new headers, a new section) and runs of
// zeros (alignment, up to a segment's p_align). Made whole in memory first, `sframe build` of
// libLLVM 22 (150 MB) spent most of its time making and faulting in 150 MB buffers; written
// from the pieces, each byte of the input is copied once, by the kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "unwindkit/bytes.h"

namespace unwindkit::elf {

class FilePieces {
 public:
  // A range of the input's image, which must outlive this.
  void input(Bytes range);
  // Bytes of the copy's own.
  void own(std::vector<uint8_t> bytes);
  // Zeros up to file offset `offset` (none if the copy is that long already).
  void zeros_to(uint64_t offset);

  uint64_t size() const { return size_; }
  // Hands the copy over a piece at a time, in order: bytes to `bytes`, a run of zeros as its
  // length to `zeros` (a file can leave a hole there). Stops when either returns false, and
  // returns whether neither did.
  bool write(const std::function<bool(Bytes)>& bytes,
             const std::function<bool(uint64_t)>& zeros) const;
  // The copy in one buffer.
  std::vector<uint8_t> whole() const;

 private:
  struct Piece {
    Bytes bytes;         // a range of the input, or of owned_
    uint64_t zeros = 0;  // or this many zeros
  };
  std::vector<Piece> pieces_;
  std::vector<std::vector<uint8_t>> owned_;  // moving a vector keeps its bytes where they are
  uint64_t size_ = 0;
};

}  // namespace unwindkit::elf
