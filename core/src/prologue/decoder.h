// Capstone, opened once per thread and architecture, and its register numbers mapped to
// DWARF's (arch.h), sub-registers onto the register they are part of (ebx → rbx, w19 → x19,
// s8 → d8) so that a write to any part counts as a write to the whole.
#pragma once

#include <capstone/capstone.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "unwindkit/arch.h"

namespace unwindkit::prologue::detail {

class Decoder {
 public:
  // nullptr when Capstone cannot decode `arch` (i386 is not analyzed).
  static Decoder* for_arch(Arch arch);

  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  ~Decoder();

  csh handle() const { return handle_; }
  cs_insn* insn() const { return insn_; }
  Arch arch() const { return arch_; }
  // The DWARF number of a Capstone register id, when it (or the register it is part of) has one.
  std::optional<uint16_t> dwarf(unsigned capstone_reg) const {
    if (capstone_reg >= dwarf_.size() || dwarf_[capstone_reg] < 0) return std::nullopt;
    return static_cast<uint16_t>(dwarf_[capstone_reg]);
  }
  // Whether the register is a whole 8-byte slot's worth (x19, d8; not w19, s8): what a save
  // must store for the caller's value to be in the slot.
  bool full_width(unsigned capstone_reg) const {
    return capstone_reg < full_.size() && full_[capstone_reg];
  }

 private:
  Decoder(Arch arch, csh handle);

  Arch arch_;
  csh handle_;
  cs_insn* insn_;
  std::vector<int16_t> dwarf_;
  std::vector<bool> full_;
};

}  // namespace unwindkit::prologue::detail
