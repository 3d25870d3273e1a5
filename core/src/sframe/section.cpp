#include "unwindkit/sframe/section.h"

#include "read.h"

namespace unwindkit::sframe {

Arch Section::arch() const { return detail::abi_arch(header.abi_arch); }

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
