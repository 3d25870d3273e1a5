#include "unwindkit/dwarf/fde_ranges.h"

#include <elfutils/libdw.h>

#include <limits>

#include "cfi_entries.h"

namespace unwindkit::dwarf {

Result<std::vector<FdeRange>> fde_ranges(const elf::ElfFile& file) {
  const elf::Section* sec = file.section(".eh_frame");
  bool eh = true;
  if (sec == nullptr || sec->data.empty()) {
    sec = file.section(".debug_frame");
    eh = false;
  }
  std::vector<FdeRange> out;
  if (sec == nullptr || sec->data.empty()) return out;
  const std::string name = eh ? ".eh_frame" : ".debug_frame";
  const ByteReader section(sec->data, file.endian(), name);
  CfiEntries entries(CfiData{sec->data, sec->addr, name, eh, file.is_64(), file.endian()});
  Dwarf_Off off = 0;
  while (off < sec->data.size()) {
    uint64_t next = 0;
    Dwarf_CFI_Entry entry{};
    const int rc = entries.next(off, &next, &entry);
    if (rc > 0) break;  // the terminator
    if (rc < 0) return section.error_at(off, "entry", dwarf_errmsg(-1));
    if (next <= off) return section.error_at(off, "length", "entry does not advance");
    const Dwarf_Off at = off;
    off = next;
    if (dwarf_cfi_cie_p(&entry)) continue;
    auto fde = entries.fde(entry.fde, at);
    if (!fde) return tl::unexpected(fde.error());
    if (!*fde) return tl::unexpected(fde->error());
    const Fde& f = **fde;
    if (f.range == 0) continue;
    if (f.start + f.range < f.start)
      return section.error_at(static_cast<size_t>(entry.fde.start - sec->data.data()),
                              "address_range", "the range wraps around");
    uint64_t work = 0;
    if (__builtin_mul_overflow(f.cost.rows, f.cost.lookup, &work))
      work = std::numeric_limits<uint64_t>::max();
    out.push_back({f.start, f.start + f.range, name, at, work});
  }
  return out;
}

}  // namespace unwindkit::dwarf
