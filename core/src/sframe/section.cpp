#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

uint32_t Fre::word_bits(size_t i) const {
  const unsigned bits = 8u << word_size_code();
  const uint32_t raw = static_cast<uint32_t>(words.at(i));
  return bits >= 32 ? raw : raw & ((uint32_t{1} << bits) - 1);
}

Arch Section::arch() const {
  if (is_aarch64()) return Arch::AArch64;
  if (is_s390x()) return Arch::S390x;
  return Arch::X86_64;
}

AbiRegs abi_regs(uint8_t abi_arch) {
  switch (abi_arch) {
    case kAbiAArch64Big:
    case kAbiAArch64Little:
      return {reg::aarch64::sp, reg::aarch64::x29, reg::aarch64::x30};
    case kAbiS390xBig:
      return {reg::s390x::r15, reg::s390x::r11, reg::s390x::r14};
    default:
      return {reg::x86_64::rsp, reg::x86_64::rbp, reg::x86_64::rip};
  }
}

}  // namespace unwindkit::sframe
