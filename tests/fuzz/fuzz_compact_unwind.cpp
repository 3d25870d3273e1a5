// Fuzzes the __unwind_info decoder, validator, lookup, lowering and dumpers: the input is
// the section's bytes (and, for STACK_IND, the function code too).
#include <cstddef>
#include <cstdint>

#include "unwindkit/compact_unwind/dump.h"
#include "unwindkit/compact_unwind/lookup.h"
#include "unwindkit/compact_unwind/unwind_info.h"

using namespace unwindkit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Bytes bytes(data, size);
  size_t sum = 0;
  for (Arch arch : {Arch::X86_64, Arch::AArch64, Arch::I386})
    sum += compact_unwind::validate_unwind_info(bytes, arch).size();
  auto info = compact_unwind::decode_unwind_info(bytes);
  if (!info) return 0;
  sum += compact_unwind::dump_unwind_info(*info).size();
  sum += compact_unwind::dump_decoded(*info, Arch::X86_64, 0x100000000).size();
  for (const auto& idx : info->index) {
    for (uint64_t delta : {uint64_t{0}, uint64_t{1}, uint64_t{0x40}}) {
      auto e = compact_unwind::lookup(*info, 0x100000000, 0x100000000 + idx.function_offset + delta);
      if (!e || !*e) continue;
      for (Arch arch : {Arch::X86_64, Arch::AArch64, Arch::I386})
        if (auto l = compact_unwind::lower(arch, **e, bytes)) sum += l->rule.saved.size();
    }
  }
  return sum == 0xdeadbeef ? 1 : 0;
}
