// PC → compact unwind entry → UnwindRule. Readers never read process memory: STACK_IND's
// stack size lives in the function's code, which the caller passes in.
#pragma once

#include <cstdint>
#include <optional>

#include "unwindkit/bytes.h"
#include "unwindkit/compact_unwind/unwind_info.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit::compact_unwind {

struct Entry {
  uint64_t function_start = 0;  // addresses (image base + function offset)
  uint64_t function_end = 0;
  uint32_t encoding = 0;
  std::optional<uint32_t> personality;  // image-base offset of the personality pointer
  std::optional<uint32_t> lsda;         // image-base offset of the LSDA
  bool operator==(const Entry&) const = default;
};

// The entry covering `pc`, nullopt when the table does not cover it. A personality index
// beyond the array or HAS_LSDA without an LSDA entry is an error.
Result<std::optional<Entry>> lookup(const UnwindInfo& info, uint64_t image_base, uint64_t pc);

struct Lowered {
  enum class Kind : uint8_t {
    Rule,     // `rule` says how to unwind
    UseDwarf, // the function's rule is in DWARF CFI; `dwarf_offset` into __eh_frame is a hint
    NoInfo,   // encoding 0: nothing here, the caller falls back (this is not "stop")
  };
  Kind kind = Kind::NoInfo;
  UnwindRule rule;
  uint32_t dwarf_offset = 0;
  bool operator==(const Lowered&) const = default;
};

// Lowers `entry` into an UnwindRule (source CompactUnwind). `function_code` holds the
// function's bytes from its start; only STACK_IND reads it (the `sub $imm32, %rsp`
// immediate), an error when it is too short.
Result<Lowered> lower(Arch arch, const Entry& entry, Bytes function_code);

}  // namespace unwindkit::compact_unwind
