// One 32-bit compact unwind encoding, decoded for an architecture into what it says: mode,
// saved registers with their CFA offsets, stack size. A pure function of (arch, encoding).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit::compact_unwind {

enum class Kind : uint8_t {
  None,               // encoding 0 (or mode 0): no information here, the caller falls back
  FramePointer,       // x86 RBP_FRAME / EBP_FRAME, arm64 FRAME and FRAME_PAUTH_LR
  FramelessImmediate, // x86 STACK_IMMD, arm64 FRAMELESS
  FramelessIndirect,  // x86 STACK_IND: the stack size is an immediate in the function's code
  Dwarf,              // use DWARF CFI (`__eh_frame` offset is a hint)
};

struct SavedSlot {
  uint16_t reg;        // DWARF number
  int64_t cfa_offset;  // saved at CFA + cfa_offset
  bool operator==(const SavedSlot&) const = default;
};

struct DecodedEncoding {
  Arch arch = Arch::X86_64;
  uint32_t encoding = 0;
  uint32_t mode = 0;
  Kind kind = Kind::None;
  bool is_not_function_start = false;
  bool has_lsda = false;
  uint32_t personality_index = 0;  // 1-based, 0 = none
  // Saved registers in address order (lowest address first), other than fp and ra.
  std::vector<SavedSlot> saved;
  // FramePointer: CFA = fp + cfa_from_fp. FramelessImmediate: CFA = sp + stack_size.
  uint32_t stack_size = 0;
  // FramelessIndirect: offset of the `sub $imm32, %rsp` immediate from the function start,
  // and the bytes (pushes + return address) added to it.
  uint32_t stack_immediate_offset = 0;
  uint32_t stack_adjust = 0;
  uint32_t dwarf_offset = 0;     // Dwarf: offset into __eh_frame
  bool ra_mangled = false;       // arm64 FRAME_PAUTH_LR
  bool operator==(const DecodedEncoding&) const = default;
};

// Mode names as in compact_unwind_encoding.h ("RBP_FRAME", "STACK_IMMD", "FRAMELESS", ...).
std::string_view mode_name(Arch arch, uint32_t mode);

// x86 frameless register permutation (Lehmer code): `count` registers (0..6) from the
// 10-bit `permutation`, as compact register numbers 1..6 with reg[0] at the lowest address.
// Errors (section "encoding") when a digit is out of range or count > 6.
Result<std::vector<uint8_t>> decode_permutation(uint32_t count, uint32_t permutation);

// Errors (section "encoding", offset 0, field = the bad field) for an unknown mode or a bad
// permutation. `encoding` 0 decodes to Kind::None.
Result<DecodedEncoding> decode_encoding(Arch arch, uint32_t encoding);

}  // namespace unwindkit::compact_unwind
