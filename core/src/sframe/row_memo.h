// What decides a row's meaning besides where it lies: its FDE's info bytes, its own info byte
// and its data words. Rows with the same key interpret alike, and a section has few distinct
// ones, so the Index (one rule per key) and the dump (one text per key) work each out once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe::detail {

// Held in integers, built and compared in registers: a key built on the stack a word at a
// time and read back wider stalls every lookup (once per row of a section).
struct RowKey {
  static constexpr size_t kWords = 4;  // rows of more words are rare: not memoized
  uint64_t infos_and_word0 = 0;  // the FDE's info and info2, the row's info, then word 0
  uint64_t words12 = 0;
  uint32_t word3 = 0;
  bool operator==(const RowKey&) const = default;
};

// The key of a row with these words; nullopt when it has more than RowKey::kWords.
inline std::optional<RowKey> row_key(const Fde& fde, const Fre& fre,
                                     std::span<const int32_t> words) {
  if (words.size() > RowKey::kWords) return std::nullopt;
  const auto word = [&](size_t n) {
    return n < words.size() ? uint64_t{static_cast<uint32_t>(words[n])} : 0;
  };
  return RowKey{uint64_t{fde.info} | uint64_t{fde.info2} << 8 | uint64_t{fre.info} << 16 | word(0) << 32,
                word(1) | word(2) << 32, static_cast<uint32_t>(word(3))};
}

// A map from RowKey to T: open addressing, linear probing, at most half full. Looked up once
// per row of a section: std::unordered_map took twice as long.
template <class T>
class RowMemo {
 public:
  // The value for `key`; nullptr when there is none. Valid until the next insert().
  const T* find(const RowKey& key) const {
    const uint32_t at = slots_[slot(key)].second;
    return at == 0 ? nullptr : &values_[at - 1];
  }
  void insert(const RowKey& key, T value) {
    values_.push_back(std::move(value));
    slots_[slot(key)] = {key, static_cast<uint32_t>(values_.size())};
    if (values_.size() * 2 <= slots_.size()) return;
    std::vector<std::pair<RowKey, uint32_t>> old(slots_.size() * 2);
    old.swap(slots_);
    --shift_;
    for (const auto& s : old)
      if (s.second != 0) slots_[slot(s.first)] = s;
  }

 private:
  // The key's words multiplied apart and folded, then the top bits of one more product
  // (Fibonacci hashing): a product's high bits depend on every bit below them, so rows that
  // differ in a few low bits of a word land apart. Two multiplies deep: splitmix64's
  // finalizer, four deep, was a third of validate()'s lookups.
  size_t slot_of(const RowKey& k) const {
    const uint64_t x = k.infos_and_word0 ^ k.words12 * 0x9e3779b97f4a7c15 ^
                       uint64_t{k.word3} * 0xc2b2ae3d27d4eb4f;
    return static_cast<size_t>((x * 0x9e3779b97f4a7c15) >> shift_);
  }
  // Where `key` is, or the empty slot where it goes.
  size_t slot(const RowKey& key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t at = slot_of(key);; at = (at + 1) & mask)
      if (slots_[at].second == 0 || slots_[at].first == key) return at;
  }

  std::vector<std::pair<RowKey, uint32_t>> slots_ =
      std::vector<std::pair<RowKey, uint32_t>>(64);  // second: index in values_ + 1; 0: empty
  int shift_ = 64 - 6;  // 64 - log2(slots_.size()): the product's bits that name a slot
  std::vector<T> values_;
};

}  // namespace unwindkit::sframe::detail
