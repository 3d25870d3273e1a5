// What one FRE says, in words rather than bits: the CFA rule and where the RA and FP are,
// with "not described" kept apart from "described". Both lookup (→ UnwindRule) and the
// dumper (→ objdump cells) start from here, so the word-order rules exist once.
#pragma once

#include <cstdint>

#include "unwindkit/error.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

struct Slot {
  enum class Kind : uint8_t {
    Absent,   // no word for it in this FRE
    Padding,  // one 0 word holding its place (flexible FDE; s390x RA)
    Fixed,    // at CFA + the header's fixed offset (`offset`)
    AtCfa,    // saved at CFA + offset
    InReg,    // value is reg + offset
    AtReg,    // saved at reg + offset
  };
  Kind kind = Kind::Absent;
  uint16_t reg = 0;
  int64_t offset = 0;
  bool operator==(const Slot&) const = default;
};

struct Row {
  bool ra_undefined = false;  // no data words: the outermost frame
  Slot cfa;                   // InReg (CFA = reg + offset) or AtReg (CFA = *(reg + offset))
  Slot ra;
  Slot fp;
  bool operator==(const Row&) const = default;
};

// Interprets FRE `fre_index` of FDE `fde_index`. An Error when the words cannot mean
// anything (too many for the ABI, a flexible CFA not based on a register, a dangling pair).
Result<Row> interpret(const Section& section, size_t fde_index, size_t fre_index);

}  // namespace unwindkit::sframe
