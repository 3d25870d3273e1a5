#include "core_file_notes.h"

#include <fmt/format.h>

#include <array>

#include "unwindkit/rules.h"

namespace unwindkit::unwind::detail {

namespace {

constexpr std::string_view kSection = "core";

// `struct elf_prstatus` on 64-bit Linux: pr_info (12 bytes), pr_cursig (short) at 12, then
// sigpend, sighold, pr_pid at 32, ppid/pgrp/sid, four timevals, and pr_reg at 112.
// pr_fpvalid (int, padded to 8) follows pr_reg.
constexpr size_t kCursigOffset = 12, kPidOffset = 32, kRegOffset = 112, kFpvalidSize = 8;

// x86_64 `user_regs_struct` slot order → DWARF number (psABI); -1 marks slots with no DWARF
// number (orig_rax) and rip, which becomes the PC.
constexpr int kRipSlot = 16;
constexpr std::array<int, 27> kX86_64Slots = {
    15, 14, 13, 12, 6 /*rbp*/, 3 /*rbx*/, 11, 10, 9, 8, 0 /*rax*/, 2 /*rcx*/, 1 /*rdx*/,
    4 /*rsi*/, 5 /*rdi*/, -1 /*orig_rax*/, -1 /*rip*/, 51 /*cs*/, 49 /*rflags*/, 7 /*rsp*/,
    52 /*ss*/, 58 /*fs.base*/, 59 /*gs.base*/, 53 /*ds*/, 50 /*es*/, 54 /*fs*/, 55 /*gs*/};

// AArch64 `user_pt_regs`: x0..x30, sp, pc, pstate.
constexpr size_t kAArch64Slots = 34, kAArch64PcSlot = 32;

// s390x `s390_regs` (asm/ptrace.h): psw.mask, psw.addr, gprs[16], acrs[16] (4 bytes each,
// 8 slots), orig_gpr2. r0..r15 are DWARF 0..15; psw.addr is the PC.
constexpr size_t kS390xSlots = 27, kS390xPcSlot = 1, kS390xFirstGpr = 2, kS390xGprs = 16;

size_t prstatus_slots(Arch arch) {
  switch (arch) {
    case Arch::X86_64: return kX86_64Slots.size();
    case Arch::S390x: return kS390xSlots;
    default: return kAArch64Slots;
  }
}

}  // namespace

Result<CoreThread> decode_prstatus(Bytes desc, uint64_t file_offset, Arch arch, Endian endian) {
  ByteReader r(desc, endian, kSection, file_offset);
  const size_t slots = prstatus_slots(arch);
  const size_t need = kRegOffset + slots * 8;
  if (desc.size() < need)
    return r.error_at(0, "NT_PRSTATUS",
                      fmt::format("{} bytes, an {} prstatus needs at least {}", desc.size(),
                                  arch_name(arch), need + kFpvalidSize));
  CoreThread t;
  t.regs = RegisterSet(arch);
  auto sig = r.sint_at(kCursigOffset, 2, "pr_cursig");
  auto pid = r.sint_at(kPidOffset, 4, "pr_pid");
  if (!sig) return tl::unexpected(sig.error());
  if (!pid) return tl::unexpected(pid.error());
  t.signal = static_cast<int>(*sig);
  t.tid = *pid;
  for (size_t i = 0; i < slots; ++i) {
    if (arch == Arch::S390x && i >= kS390xFirstGpr + kS390xGprs) break;  // acrs, orig_gpr2
    auto v = r.uint_at(kRegOffset + i * 8, 8, "pr_reg");
    if (!v) return tl::unexpected(v.error());
    if (arch == Arch::S390x) {
      if (i == kS390xPcSlot) t.regs.set_pc(*v);
      else if (i >= kS390xFirstGpr) t.regs.set(static_cast<uint16_t>(i - kS390xFirstGpr), *v);
    } else if (arch == Arch::X86_64) {
      if (i == kRipSlot) t.regs.set_pc(*v);
      else if (kX86_64Slots[i] >= 0) t.regs.set(static_cast<uint16_t>(kX86_64Slots[i]), *v);
    } else if (i == kAArch64PcSlot) {
      t.regs.set_pc(*v);
    } else if (i < kAArch64PcSlot) {
      t.regs.set(static_cast<uint16_t>(i), *v);  // x0..x30 are 0..30, sp is 31
    }
  }
  return t;
}

Result<std::vector<MappedFile>> decode_nt_file(Bytes desc, uint64_t file_offset, Endian endian) {
  ByteReader r(desc, endian, kSection, file_offset);
  auto count = r.u64("NT_FILE count");
  if (!count) return tl::unexpected(count.error());
  auto page = r.u64("NT_FILE page_size");
  if (!page) return tl::unexpected(page.error());
  // Each entry takes 24 bytes of triples and at least one byte of path.
  if (*count > r.remaining() / 25)
    return r.error_at(0, "NT_FILE count",
                      fmt::format("{} entries cannot fit in {} bytes", *count, desc.size()));
  std::vector<MappedFile> out(*count);
  for (auto& m : out) {
    auto start = r.u64("NT_FILE start");
    auto end = r.u64("NT_FILE end");
    auto pgoff = r.u64("NT_FILE file_ofs");
    if (!start) return tl::unexpected(start.error());
    if (!end) return tl::unexpected(end.error());
    if (!pgoff) return tl::unexpected(pgoff.error());
    if (*end < *start)
      return r.error_at(r.pos() - 16, "NT_FILE end",
                        fmt::format("end {:#x} below start {:#x}", *end, *start));
    if (*page != 0 && *pgoff > UINT64_MAX / *page)
      return r.error_at(r.pos() - 8, "NT_FILE file_ofs", "page offset overflows");
    m.start = *start;
    m.end = *end;
    m.file_offset = *pgoff * *page;
  }
  for (auto& m : out) {
    const Bytes rest = r.data().subspan(r.pos());
    size_t len = 0;
    while (len < rest.size() && rest[len] != 0) ++len;
    if (len == rest.size()) return r.error("NT_FILE path", "path not NUL-terminated");
    m.path.assign(reinterpret_cast<const char*>(rest.data()), len);
    (void)r.skip(len + 1, "NT_FILE path");
  }
  return out;
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> decode_auxv(Bytes desc, uint64_t file_offset,
                                                                Endian endian) {
  ByteReader r(desc, endian, kSection, file_offset);
  std::vector<std::pair<uint64_t, uint64_t>> out;
  while (!r.at_end()) {
    auto type = r.u64("auxv a_type");
    if (!type) return tl::unexpected(type.error());
    auto value = r.u64("auxv a_val");
    if (!value) return tl::unexpected(value.error());
    if (*type == 0) break;  // AT_NULL
    out.emplace_back(*type, *value);
  }
  return out;
}

}  // namespace unwindkit::unwind::detail
