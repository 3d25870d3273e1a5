// Lowering of libdw's answers about one CFI row (DWARF expressions over Dwarf_Op) into the
// rule model (rules.h). Pure functions: no tables, no memory. Only the shapes real
// compilers and glibc emit are lowered; anything else is an Error, so a walker can fall
// back to another unwind source.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit::dwarf {

// Where lowering errors point: the CFI section and the code address being looked up
// (libdw does not tell which FDE it used, so the error names the address instead).
struct LowerContext {
  std::string_view section;  // ".eh_frame" or ".debug_frame"
  uint64_t address = 0;
};

// The CFA from dwarf_frame_cfa: `bregx R off` (DW_CFA_def_cfa) → RegOffset;
// `breg R off; deref` (glibc's __restore_rt) → DerefRegOffset.
Result<CfaRule> lower_cfa(std::span<const Dwarf_Op> ops, const LowerContext& ctx);

// One register from dwarf_frame_register: `result` is its return value (1: the ops compute
// a value, 0: a location), `ops` null for "same value" and non-null but empty for
// "undefined". Offsets from the CFA → AtCfa / ValCfa; DW_CFA_register → InReg;
// `breg R off` → AtReg (InReg when it is a value).
Result<RegRule> lower_register(int result, const Dwarf_Op* ops, size_t nops,
                               std::string_view field, const LowerContext& ctx);

}  // namespace unwindkit::dwarf
