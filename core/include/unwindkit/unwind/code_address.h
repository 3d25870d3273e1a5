// A frame's PC and how to read it (framehop's CodeAddress). The innermost frame, and a frame
// a signal interrupted, stopped *at* their PC: that instruction had not run, and every
// register holds the frame's own value. Any other frame's PC is a return address: the
// instruction after a call, which may already be the first byte of the next function (a
// call to a noreturn function can end its function), and only the registers that rules
// recovered are known there. Every lookup of a rule or a name goes through lookup_address().
#pragma once

#include <cstdint>

namespace unwindkit::unwind {

class CodeAddress {
 public:
  static constexpr CodeAddress interrupted(uint64_t pc) { return {pc, false}; }
  static constexpr CodeAddress return_address(uint64_t pc) { return {pc, true}; }

  constexpr uint64_t pc() const { return pc_; }
  constexpr bool is_return_address() const { return return_address_; }
  // Where the frame's rule and function are looked up: for a return address, the last byte
  // of the call instruction.
  constexpr uint64_t lookup_address() const { return return_address_ && pc_ > 0 ? pc_ - 1 : pc_; }
  // Every register of the frame is its own: rules may take any of them (RegRule::uses_register,
  // a CFA from a register other than SP/FP).
  constexpr bool trusts_all_registers() const { return !return_address_; }

  constexpr bool operator==(const CodeAddress&) const = default;

 private:
  constexpr CodeAddress(uint64_t pc, bool return_address)
      : pc_(pc), return_address_(return_address) {}
  uint64_t pc_;
  bool return_address_;
};

}  // namespace unwindkit::unwind
