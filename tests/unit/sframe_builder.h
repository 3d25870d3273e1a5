// A tiny SFrame section builder for the unit tests: it lays out exactly the bytes the
// format describes (header, FDE index, FRE sub-section; v3 attribute records) in either
// byte order, from raw field values the tests spell out by hand. It interprets nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "unwindkit/bytes.h"

namespace unwindkit::test {

struct FreSpec {
  uint32_t start = 0;
  uint8_t info = 0;  // fre_info byte, see fre_info()
  std::vector<int32_t> words;
};

// fre_info: bit 0 CFA base SP, bits 1-4 word count, bits 5-6 word size code, bit 7 mangled RA.
inline uint8_t fre_info(bool base_sp, size_t words, uint8_t size_code = 0, bool mangled = false) {
  return static_cast<uint8_t>((base_sp ? 1 : 0) | (words << 1) | (size_code << 5) |
                              (mangled ? 0x80 : 0));
}

struct FdeSpec {
  int64_t start = 0;  // the raw stored start field
  uint32_t size = 0;
  uint8_t info = 0;   // bits 0-3 FRE type, bit 4 PCMASK, bit 5 key B, bit 7 signal (v3)
  uint8_t info2 = 0;  // v3: 1 = flexible FDE
  uint8_t rep_size = 0;
  std::vector<FreSpec> fres;
  // When set, the stored num_fres (else fres.size()).
  int64_t num_fres_override = -1;
};

struct SectionSpec {
  Endian endian = Endian::Little;
  uint8_t version = 2;
  uint8_t flags = 1;  // SORTED
  uint8_t abi = 3;    // AMD64
  int8_t fixed_fp = 0;
  int8_t fixed_ra = -8;
  std::vector<uint8_t> aux;
  std::vector<FdeSpec> fdes;
};

class ByteWriter {
 public:
  explicit ByteWriter(Endian e) : e_(e) {}
  void put(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const size_t shift = e_ == Endian::Little ? i : n - 1 - i;
      out.push_back(static_cast<uint8_t>(v >> (8 * shift)));
    }
  }
  void put_at(size_t pos, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const size_t shift = e_ == Endian::Little ? i : n - 1 - i;
      out[pos + i] = static_cast<uint8_t>(v >> (8 * shift));
    }
  }
  std::vector<uint8_t> out;

 private:
  Endian e_;
};

inline std::vector<uint8_t> build_sframe(const SectionSpec& s) {
  const size_t fde_size = s.version == 1 ? 17 : s.version == 2 ? 20 : 16;
  // FRE sub-section first (fre_off of each FDE depends on it).
  ByteWriter fres(s.endian);
  std::vector<uint32_t> fre_offs;
  uint32_t total_fres = 0;
  for (const FdeSpec& f : s.fdes) {
    fre_offs.push_back(static_cast<uint32_t>(fres.out.size()));
    const uint32_t n = f.num_fres_override >= 0 ? static_cast<uint32_t>(f.num_fres_override)
                                                : static_cast<uint32_t>(f.fres.size());
    total_fres += n;
    if (s.version == 3) {
      fres.put(n, 2);
      fres.put(f.info, 1);
      fres.put(f.info2, 1);
      fres.put(f.rep_size, 1);
    }
    const size_t start_size = size_t{1} << (f.info & 0xf);
    for (const FreSpec& r : f.fres) {
      fres.put(r.start, start_size);
      fres.put(r.info, 1);
      const size_t word_size = size_t{1} << ((r.info >> 5) & 3);
      for (int32_t w : r.words) fres.put(static_cast<uint32_t>(w), word_size);
    }
  }
  ByteWriter b(s.endian);
  b.put(0xdee2, 2);
  b.put(s.version, 1);
  b.put(s.flags, 1);
  b.put(s.abi, 1);
  b.put(static_cast<uint8_t>(s.fixed_fp), 1);
  b.put(static_cast<uint8_t>(s.fixed_ra), 1);
  b.put(s.aux.size(), 1);
  b.put(s.fdes.size(), 4);
  b.put(total_fres, 4);
  b.put(fres.out.size(), 4);
  b.put(0, 4);                           // fdeoff
  b.put(s.fdes.size() * fde_size, 4);    // freoff
  b.out.insert(b.out.end(), s.aux.begin(), s.aux.end());
  for (size_t i = 0; i < s.fdes.size(); ++i) {
    const FdeSpec& f = s.fdes[i];
    b.put(static_cast<uint64_t>(f.start), s.version == 3 ? 8 : 4);
    b.put(f.size, 4);
    b.put(fre_offs[i], 4);
    if (s.version != 3) {
      b.put(f.num_fres_override >= 0 ? static_cast<uint64_t>(f.num_fres_override) : f.fres.size(),
            4);
      b.put(f.info, 1);
      if (s.version == 2) {
        b.put(f.rep_size, 1);
        b.put(0, 2);
      }
    }
  }
  b.out.insert(b.out.end(), fres.out.begin(), fres.out.end());
  return b.out;
}

}  // namespace unwindkit::test
