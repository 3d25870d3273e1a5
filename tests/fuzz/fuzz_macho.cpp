// Fuzzes the Mach-O container (thin and fat) and the __compact_unwind object reader on it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

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
    }
  }
  return sum == 0xdeadbeef ? 1 : 0;
}
