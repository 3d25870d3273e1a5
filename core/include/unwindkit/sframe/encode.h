// The SFrame writer: a decoded section (section.h) re-encoded as v1, v2 or v3 for wherever the
// new section will be loaded. Rows keep their data words, word size and info bits; only the
// container changes (FDE layout, function start fields, FRE start widths, flags).
#pragma once

#include <cstdint>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

struct EncodeOptions {
  uint8_t version = kVersion3;  // kVersion1, kVersion2 or kVersion3
  // v2 only: function starts relative to each FDE's start field (binutils 2.45) instead of
  // the section start. v3 is always PC-relative.
  bool pcrel = false;
  uint64_t address = 0;  // where the new section is loaded
};

// The section's bytes, in the source's byte order. Layout as binutils writes it: header, FDE
// index, then each function's FREs (v3: after its attribute record) in the source's order. Fails for
// what the target cannot say (v1/v2: flex FDEs, signal frames; a start offset or count that
// overflows its field; s390x register words whose meaning differs between v2 and v3) and for
// an aux header, whose bytes the decoded model does not keep.
Result<std::vector<uint8_t>> encode(const Section& section, const EncodeOptions& options);

}  // namespace unwindkit::sframe
