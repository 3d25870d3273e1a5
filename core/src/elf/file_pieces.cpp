#include "unwindkit/elf/file_pieces.h"

#include <utility>

namespace unwindkit::elf {

void FilePieces::input(Bytes range) {
  if (range.empty()) return;
  pieces_.push_back({range});
  size_ += range.size();
}

void FilePieces::own(std::vector<uint8_t> bytes) {
  if (bytes.empty()) return;
  owned_.push_back(std::move(bytes));
  input(owned_.back());
}

void FilePieces::zeros_to(uint64_t offset) {
  if (offset <= size_) return;
  pieces_.push_back({{}, offset - size_});
  size_ = offset;
}

bool FilePieces::write(const std::function<bool(Bytes)>& bytes,
                       const std::function<bool(uint64_t)>& zeros) const {
  for (const Piece& piece : pieces_) {
    if (!piece.bytes.empty() && !bytes(piece.bytes)) return false;
    if (piece.zeros != 0 && !zeros(piece.zeros)) return false;
  }
  return true;
}

std::vector<uint8_t> FilePieces::whole() const {
  std::vector<uint8_t> out;
  out.reserve(size_);
  write(
      [&out](Bytes b) {
        out.insert(out.end(), b.begin(), b.end());
        return true;
      },
      [&out](uint64_t n) {
        out.resize(out.size() + n);
        return true;
      });
  return out;
}

}  // namespace unwindkit::elf
