// Byte vectors of shared/notes/formats.md §3, assembled by hand from their description and
// from the record listing of LLVM's llvm-objdump --traceback test (traceback-dump-complete.s,
// the 199-byte module), not by our writer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace unwindkit::trace::test {

using B = std::vector<uint8_t>;

inline void le(B& b, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
inline void str(B& b, const std::string& s) {
  le(b, s.size(), 2);
  b.insert(b.end(), s.begin(), s.end());
}
inline void pad8(B& b) {
  while (b.size() % 8 != 0) b.push_back(0);
}
inline void rtn64(B& b, const std::string& name, uint64_t pc) {
  pad8(b);
  b.insert(b.end(), {0x0c, 0x00});
  le(b, name.size(), 2);
  le(b, pc, 8);
  b.insert(b.end(), name.begin(), name.end());
}
// HDR with P = 8, `size` as given, no module name.
inline B header(uint32_t size, uint64_t begin, uint32_t code_size,
                const std::vector<std::string>& files) {
  B b{0x0a, 0x02, 0x00, 0x00};
  le(b, size, 4);
  le(b, begin, 8);
  le(b, files.size(), 4);
  le(b, code_size, 4);
  le(b, 0, 2);
  for (const auto& f : files) str(b, f);
  return b;
}

inline constexpr uint64_t kBegin = 0x401000;
inline const std::vector<std::string> kFiles{"traceback-complete_a.c", "traceback-complete_b.c"};

// main (6 over [0,0xf), 7 over [0xf,0x21)), subr1 at +0x30 (10..13), subr2 at +0x70 in file 1
// (LN1 -9 from 13 = line 4), with LN1 + PC4 pairs as in the LLVM listing: 199 bytes.
inline B module199() {
  B b = header(199, kBegin, 0x8e, kFiles);
  rtn64(b, "main", kBegin);
  b.insert(b.end(), {0x04, 0x06, 0x09, 0x0e, 0, 0, 0, 0x04, 0x01, 0x09, 0x11, 0, 0, 0});
  rtn64(b, "subr1", kBegin + 0x30);
  b.insert(b.end(), {0x04, 0x03, 0x09, 0x0a, 0, 0, 0, 0x04, 0x01, 0x09, 0x0e, 0, 0, 0,
                     0x04, 0x01, 0x09, 0x0d, 0, 0, 0, 0x04, 0x01, 0x09, 0x08, 0, 0, 0});
  b.insert(b.end(), {0x03, 0x01, 0, 0, 0});
  rtn64(b, "subr2", kBegin + 0x70);
  b.insert(b.end(), {0x04, 0xf7, 0x09, 0x0a, 0, 0, 0, 0x04, 0x01, 0x09, 0x12, 0, 0, 0});
  return b;
}

// A module of no files whose records follow the HDR directly (line 0, PC 0 after the HDR).
inline B bare_module(const B& records) {
  B b = header(0, 0, 0x100000, {});
  b.insert(b.end(), records.begin(), records.end());
  const uint32_t size = static_cast<uint32_t>(b.size());
  for (unsigned i = 0; i < 4; ++i) b[4 + i] = static_cast<uint8_t>(size >> (8 * i));
  return b;
}

}  // namespace unwindkit::trace::test
