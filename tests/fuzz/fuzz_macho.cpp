// Fuzzes the Mach-O container (thin and fat), the __compact_unwind object reader on it, and
// lookups through the slice (rules, STACK_IND code reads, DWARF handover to __eh_frame).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <variant>

#include "unwindkit/compact_unwind/report.h"
#include "unwindkit/compact_unwind/tables.h"
#include "unwindkit/macho/macho_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto image = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto f = unwindkit::macho::MachOFile::parse(image);
  if (!f) return 0;
  size_t sum = 0;
  for (const auto& slice : f->slices()) {
    for (const auto& s : slice.sections()) {
      for (uint8_t b : s.data) sum += b;  // every borrowed byte must be readable
      sum += slice.bytes_at_address(s.addr, 8).size();
    }
    for (const auto& sym : slice.symbols()) sum += sym.name.size();
    if (auto t = unwindkit::compact_unwind::decode_slice(slice)) {
      sum += unwindkit::compact_unwind::dump_tables(*t, true).size();
      sum += unwindkit::compact_unwind::tables_json(*t).size();
      // A few lookups: each decodes the slice again, so keep the count small.
      std::vector<uint64_t> pcs;
      for (const auto& table : t->tables) {
        if (const auto* info = std::get_if<unwindkit::compact_unwind::UnwindInfo>(&table)) {
          for (const auto& page : info->pages)
            for (const auto& e : page.entries) pcs.push_back(t->image_base + e.function_offset + 1);
        } else {
          for (const auto& e : std::get<std::vector<unwindkit::compact_unwind::ObjectEntry>>(table))
            pcs.push_back(e.function);
        }
      }
      if (pcs.size() > 8) pcs.resize(8);
      for (uint64_t pc : pcs)
        if (auto r = unwindkit::compact_unwind::lookup_report(slice, pc); r && *r)
          sum += unwindkit::compact_unwind::lookup_text(**r).size();
    }
  }
  return sum == 0xdeadbeef ? 1 : 0;
}
