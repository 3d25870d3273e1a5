// A hand-built process memory for stepper and walker tests: little or big-endian words
// placed at chosen addresses; everything else is unreadable.
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "unwindkit/bytes.h"
#include "unwindkit/stepper.h"

namespace unwindkit::test {

class FakeMemory : public MemoryReader {
 public:
  explicit FakeMemory(Endian endian = Endian::Little, unsigned word = 8)
      : endian_(endian), word_(word) {}

  void put_word(uint64_t addr, uint64_t value) {
    for (unsigned i = 0; i < word_; ++i) {
      const unsigned shift = endian_ == Endian::Little ? 8 * i : 8 * (word_ - 1 - i);
      bytes_[addr + i] = static_cast<uint8_t>(value >> shift);
    }
  }

  bool read(uint64_t addr, std::span<uint8_t> out) const override {
    for (size_t i = 0; i < out.size(); ++i) {
      auto it = bytes_.find(addr + i);
      if (it == bytes_.end()) return false;
      out[i] = it->second;
    }
    return true;
  }

 private:
  Endian endian_;
  unsigned word_;
  std::map<uint64_t, uint8_t> bytes_;
};

}  // namespace unwindkit::test
