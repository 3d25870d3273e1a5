// The stepper's memory, read through a Python callable `read(addr, size)` that returns a
// buffer (GDB's Inferior.read_memory gives a gdb.Membuf), in blocks kept until flush().
//
// Why blocks: a backtrace reads neighbouring stack slots frame after frame, and every read
// through GDB is a Python round trip costing more than the rest of a frame's unwind. The
// Python side flushes on every event after which memory may differ (stop, continue, memory
// or register writes, inferior calls, new objfiles, each prompt).
//
// Any Python exception, a short buffer or None means "unreadable": the exception is consumed
// here, never propagated, so a failed read becomes the stepper's error naming the address.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "unwindkit/stepper.h"

namespace unwindkit::gdb {

class PythonMemory : public MemoryReader {
 public:
  explicit PythonMemory(pybind11::object read) : read_(std::move(read)) {}

  bool read(uint64_t addr, std::span<uint8_t> out) const override;
  void flush() { blocks_.clear(); }

 private:
  static constexpr uint64_t kBlockSize = 1024;
  static constexpr size_t kMaxBlocks = 16384;  // 16 MiB of stack, far beyond any real walk

  bool read_direct(uint64_t addr, std::span<uint8_t> out) const;
  // The block starting at `base`, read on first use; null if it cannot be read whole (the
  // end of a mapping): such ranges are then read exactly, uncached.
  const std::vector<uint8_t>* block(uint64_t base) const;

  pybind11::object read_;
  mutable std::unordered_map<uint64_t, std::optional<std::vector<uint8_t>>> blocks_;
};

}  // namespace unwindkit::gdb
