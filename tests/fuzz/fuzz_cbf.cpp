// Fuzzes the CBF decoder (single and streaming), the text carriers, and re-encoding: what
// decodes cleanly must encode and decode to the same frames.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "unwindkit/cbf/constants.h"
#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/dump.h"
#include "unwindkit/cbf/encode.h"
#include "unwindkit/cbf/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace unwindkit::cbf;
  const unwindkit::Bytes bytes(data, size);
  for (const auto& rec : decode_stream(bytes)) {
    if (!rec) break;
    (void)dump_text(*rec);
    (void)dump_json(*rec);
    // Merged repeats over Swift's limit re-encode to a `rep` its decoder refuses.
    bool over = false;
    for (const Run& r : rec->runs) over |= r.count > kMaxRepeat + 1;
    auto again = encode(rec->word_size, rec->runs);
    if (!again || over) continue;
    auto back = decode(*again);
    if (!back || back->runs != rec->runs) std::abort();
  }
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto b = from_base64(text)) {
    if (from_base64(to_base64(*b)) != b) std::abort();
  }
  (void)from_hex(text);
  return 0;
}
