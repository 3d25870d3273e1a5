#include "unwindkit/sframe/section.h"

#include "read.h"

namespace unwindkit::sframe {

Arch Section::arch() const { return detail::abi_arch(header.abi_arch); }

const ArchInfo& abi_regs(uint8_t abi_arch) { return arch_info(detail::abi_arch(abi_arch)); }

}  // namespace unwindkit::sframe
