// Fuzzes "lookup + step": an SFrame section decoded from the input, looked up at an input
// PC, and the rule (and the frame-pointer rule) applied to input registers over an input
// stack. Nothing may crash, hang or read outside the given stack bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "unwindkit/sframe/section.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/stepper.h"

namespace {

using namespace unwindkit;

// The stack: `bytes` at [base, base + size); everything else unreadable.
class Stack : public MemoryReader {
 public:
  Stack(uint64_t base, std::span<const uint8_t> bytes) : base_(base), bytes_(bytes) {}
  bool read(uint64_t addr, std::span<uint8_t> out) const override {
    if (addr < base_ || addr - base_ > bytes_.size() || out.size() > bytes_.size() - (addr - base_))
      return false;
    std::memcpy(out.data(), bytes_.data() + (addr - base_), out.size());
    return true;
  }

 private:
  uint64_t base_;
  std::span<const uint8_t> bytes_;
};

uint64_t take_u64(const uint8_t*& p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  p += 8;
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kFixed = 1 + 3 * 8 + 2;
  if (size < kFixed) return 0;
  const uint8_t* p = data;
  const uint8_t flags = *p++;
  const uint64_t pc = 0x1000 + (take_u64(p) & 0xffff);
  const uint64_t sp = take_u64(p) & ~uint64_t{7};
  const uint64_t fp = take_u64(p);
  const size_t stack_len = std::min<size_t>(p[0] | (p[1] << 8), size - kFixed);
  p += 2;
  const Stack stack(sp, std::span<const uint8_t>(p, stack_len));
  const Bytes section(p + stack_len, size - kFixed - stack_len);

  auto decoded = sframe::decode(section, 0x1000);
  if (!decoded) return 0;
  auto rule = sframe::lookup(*decoded, pc);
  if (!rule || !*rule) return 0;
  StepOptions options;
  options.endian = decoded->endian;
  options.trust_all_registers = (flags & 1) != 0;
  RegisterSet regs((*rule)->arch);
  regs.set_pc(pc);
  regs.set(regs.sp_reg(), sp);
  regs.set(regs.fp_reg(), fp);
  if (flags & 2) regs.set(regs.ra_reg(), fp ^ sp);
  auto r = step(**rule, regs, stack, options);
  if (r && !r->outermost && r->caller.pc() && r->caller.sp()) {
    // A second step from the caller: rules applied to recovered registers.
    (void)step(**rule, r->caller, stack, options);
  }
  return 0;
}
