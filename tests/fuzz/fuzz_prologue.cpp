// Fuzzes the prologue analyzer: random code and random table rows, every architecture.
// Input: u8 architecture (x86_64, AArch64, s390x by value mod 3), u8 row count (mod 64),
// per row 5 bytes (u16 start offset, u8 base: bit 0 FP else SP, bit 1 a DerefRegOffset CFA,
// bit 2 outermost; i16 CFA offset), all little-endian; the rest is the code at 0x400000.
// Nothing may crash or hang, and the regions must be sorted, contiguous and cover the code.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "unwindkit/prologue/analyzer.h"

namespace {

using namespace unwindkit;

constexpr Arch kArchs[] = {Arch::X86_64, Arch::AArch64, Arch::S390x};

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Arch arch = kArchs[data[0] % 3];
  const size_t count = data[1] % 64;
  size_t pos = 2;
  constexpr uint64_t kStart = 0x400000;
  const ArchInfo& info = arch_info(arch);
  std::vector<prologue::TableRow> rows;
  for (size_t i = 0; i < count && pos + 5 <= size; ++i, pos += 5) {
    const uint16_t start = static_cast<uint16_t>(data[pos] | (data[pos + 1] << 8));
    const uint8_t base = data[pos + 2];
    int16_t offset;
    std::memcpy(&offset, data + pos + 3, 2);
    prologue::TableRow row;
    row.start = kStart + start;
    row.rule.arch = arch;
    row.rule.cfa = {(base & 2) ? CfaRule::Kind::DerefRegOffset : CfaRule::Kind::RegOffset,
                    (base & 1) ? info.fp : info.sp, offset};
    if (base & 4) row.rule.ra = RegRule::undefined();
    rows.push_back(row);
  }
  // Each row up to the next one's start (in input order, so overlaps and gaps happen too).
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i].end = i + 1 < rows.size() ? rows[i + 1].start : kStart + 0x10000;
  const Bytes code(data + pos, size - pos);
  const prologue::Analysis a = prologue::analyze(arch, code, kStart, rows);
  if (code.empty()) {
    check(a.regions.empty());
    return 0;
  }
  check(!a.regions.empty() && a.regions.front().start == kStart &&
        a.regions.back().end == kStart + code.size());
  for (size_t i = 0; i < a.regions.size(); ++i) {
    const prologue::Region& r = a.regions[i];
    check(r.start < r.end);
    if (i > 0) check(r.start == a.regions[i - 1].end);
    for (size_t k = 1; k < r.saved.size(); ++k) check(r.saved[k - 1].reg < r.saved[k].reg);
    check(a.at(r.start) == &r && a.at(r.end - 1) == &r);
  }
  check(a.at(kStart - 1) == nullptr && a.at(kStart + code.size()) == nullptr);
  check(!a.fully_explained || !a.stopped);
  return 0;
}
