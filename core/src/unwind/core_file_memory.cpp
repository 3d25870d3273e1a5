#include "core_file_memory.h"

#include <algorithm>
#include <cstring>

namespace unwindkit::unwind::detail {

void CoreMemory::add_core_segment(uint64_t vaddr, Bytes bytes) {
  if (bytes.empty() || bytes.size() > UINT64_MAX - vaddr) return;
  core_.push_back(Piece{vaddr, vaddr + bytes.size(), bytes, nullptr});
}

void CoreMemory::add_file_mapping(uint64_t start, uint64_t end, uint64_t file_offset,
                                  const FileImage& file) {
  // Only the part of the mapping the file really has: past its end a mapping faults (SIGBUS).
  if (end <= start || file_offset >= file.bytes.size()) return;
  const uint64_t len = std::min<uint64_t>(end - start, file.bytes.size() - file_offset);
  const Bytes data = file.bytes.subspan(static_cast<size_t>(file_offset), static_cast<size_t>(len));
  files_.push_back(Piece{start, start + len, data, file.owner});
}

void CoreMemory::finish() {
  auto by_start = [](const Piece& a, const Piece& b) { return a.start < b.start; };
  std::stable_sort(core_.begin(), core_.end(), by_start);
  std::stable_sort(files_.begin(), files_.end(), by_start);
}

std::optional<Bytes> CoreMemory::at(const std::vector<Piece>& pieces, uint64_t addr) {
  // The last piece starting at or below addr; pieces do not overlap in a well-formed core, and
  // in a malformed one the lookup still stays inside the piece it picks.
  auto it = std::upper_bound(pieces.begin(), pieces.end(), addr,
                             [](uint64_t a, const Piece& p) { return a < p.start; });
  if (it == pieces.begin()) return std::nullopt;
  --it;
  if (addr >= it->end) return std::nullopt;
  return it->data.subspan(static_cast<size_t>(addr - it->start));
}

bool CoreMemory::read_from(const std::vector<Piece>& first, const std::vector<Piece>* second,
                           uint64_t addr, std::span<uint8_t> out) {
  if (out.size() > UINT64_MAX - addr) return false;
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t a = addr + done;
    auto run = at(first, a);
    size_t n = out.size() - done;
    if (!run && second) {
      run = at(*second, a);
      // The core's own bytes win wherever it has them: stop this run at the next core piece.
      auto next = std::upper_bound(first.begin(), first.end(), a,
                                   [](uint64_t x, const Piece& p) { return x < p.start; });
      if (next != first.end()) n = static_cast<size_t>(std::min<uint64_t>(n, next->start - a));
    }
    if (!run || run->empty()) return false;
    n = std::min(run->size(), n);
    std::memcpy(out.data() + done, run->data(), n);
    done += n;
  }
  return true;
}

bool CoreMemory::read(uint64_t addr, std::span<uint8_t> out) const {
  return read_from(core_, &files_, addr, out);
}

bool CoreMemory::read_core(uint64_t addr, std::span<uint8_t> out) const {
  return read_from(core_, nullptr, addr, out);
}

}  // namespace unwindkit::unwind::detail
