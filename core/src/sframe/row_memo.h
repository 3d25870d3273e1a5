// What decides a row's meaning besides where it lies: its FDE's info bytes, its own info byte
// and its data words. Rows with the same key interpret alike, and a section has few distinct
// ones, so the Index (one rule per key) and the dump (one text per key) work each out once.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe::detail {

struct RowKey {
  static constexpr size_t kWords = 4;  // rows of more words are rare: not memoized
  uint8_t fde_info = 0, fde_info2 = 0, fre_info = 0;
  std::array<int32_t, kWords> words{};
  bool operator==(const RowKey&) const = default;
};

// The key of a row with these words; nullopt when it has more than RowKey::kWords.
inline std::optional<RowKey> row_key(const Fde& fde, const Fre& fre,
                                     std::span<const int32_t> words) {
  if (words.size() > RowKey::kWords) return std::nullopt;
  RowKey key{fde.info, fde.info2, fre.info, {}};
  std::copy(words.begin(), words.end(), key.words.begin());
  return key;
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
    for (const auto& s : old)
      if (s.second != 0) slots_[slot(s.first)] = s;
  }

 private:
  // splitmix64's finalizer over the key's bits: rows differ in a few low bits of a word,
  // which a plain multiply would leave in the same slots.
  static uint64_t hash(const RowKey& k) {
    const auto word = [&](size_t n) { return uint64_t{static_cast<uint32_t>(k.words[n])}; };
    uint64_t x = (uint64_t{k.fde_info} | uint64_t{k.fde_info2} << 8 |
                  uint64_t{k.fre_info} << 16 | word(0) << 32) ^
                 (word(1) | word(2) << 32) * 0x9e3779b97f4a7c15 ^ word(3) * 0xc2b2ae3d27d4eb4f;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
    x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
    return x ^ (x >> 31);
  }
  // Where `key` is, or the empty slot where it goes.
  size_t slot(const RowKey& key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t at = static_cast<size_t>(hash(key)) & mask;; at = (at + 1) & mask)
      if (slots_[at].second == 0 || slots_[at].first == key) return at;
  }

  std::vector<std::pair<RowKey, uint32_t>> slots_ =
      std::vector<std::pair<RowKey, uint32_t>>(64);  // second: index in values_ + 1; 0: empty
  std::vector<T> values_;
};

}  // namespace unwindkit::sframe::detail
