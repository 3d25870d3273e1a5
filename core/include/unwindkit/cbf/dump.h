// Text and JSON views of a decoded record: pure functions of the model (and of what a
// debugger says about each address).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "unwindkit/cbf/backtrace.h"

namespace unwindkit::cbf {

// What a debugger knows of an address: the symbol holding it and its source line.
struct Place {
  std::string symbol;  // empty: no symbol
  uint64_t symbol_start = 0;
  std::string module;  // the file holding the symbol, as a base name
  std::string file;    // empty: no line
  uint64_t line = 0;
};
// Looks up an address (a return address at address - 1, see lookup_address).
using Symbolizer = std::function<Place(uint64_t address)>;

// Where a frame's address is symbolized: a return address at address - 1 (the call), as
// `bt` does, so a call that ends its function still names the caller.
uint64_t lookup_address(const Frame& f);

// "CBF record: 64-bit, N frames, B bytes", then one line per run of equal frames:
// `#N kind address ...`, `#N-#M ... (xK)` for a repeat; "problem: ..." when the decoder
// stopped early. With `symbolize`, each address is followed by " in name+off (module)" (or
// " in ??") and " at file:line" when known.
std::string dump_text(const Backtrace& bt, const Symbolizer& symbolize = {});
// {"word_size":64,"frames":[{"kind":"pc","address":"0x1000","repeat":1},...],
//  "truncated":bool,"problem":null|"..."} — documented in docs/cbf.md.
std::string dump_json(const Backtrace& bt);

}  // namespace unwindkit::cbf
