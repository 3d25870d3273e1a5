#include "python_memory.h"

#include <cstring>

namespace py = pybind11;

namespace unwindkit::gdb {

bool PythonMemory::read_direct(uint64_t addr, std::span<uint8_t> out) const {
  try {
    py::object got = read_(addr, out.size());
    if (got.is_none()) return false;
    py::buffer_info info = py::buffer(got).request();
    auto size = static_cast<size_t>(info.size * info.itemsize);
    if (size < out.size()) return false;
    std::memcpy(out.data(), info.ptr, out.size());
    return true;
  } catch (const py::error_already_set&) {
    return false;
  } catch (const py::cast_error&) {
    return false;
  }
}

const std::vector<uint8_t>* PythonMemory::block(uint64_t base) const {
  auto found = blocks_.find(base);
  if (found == blocks_.end()) {
    if (blocks_.size() >= kMaxBlocks) blocks_.clear();
    std::vector<uint8_t> bytes(kBlockSize);
    std::optional<std::vector<uint8_t>> entry;
    if (read_direct(base, bytes)) entry = std::move(bytes);
    found = blocks_.emplace(base, std::move(entry)).first;
  }
  return found->second ? &*found->second : nullptr;
}

bool PythonMemory::read(uint64_t addr, std::span<uint8_t> out) const {
  uint64_t base = addr & ~(kBlockSize - 1);
  // Reads that cross a block boundary (or wrap around) are rare: read them exactly.
  if (out.empty() || addr + out.size() < addr || addr + out.size() > base + kBlockSize)
    return read_direct(addr, out);
  const std::vector<uint8_t>* bytes = block(base);
  if (bytes == nullptr) return read_direct(addr, out);
  std::memcpy(out.data(), bytes->data() + (addr - base), out.size());
  return true;
}

}  // namespace unwindkit::gdb
