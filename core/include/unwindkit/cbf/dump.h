// Text and JSON views of a decoded record: pure functions of the model.
#pragma once

#include <string>

#include "unwindkit/cbf/backtrace.h"

namespace unwindkit::cbf {

// One line per run: "pc 0x1000", "ra 0x2020 x2" (repeated), "omit 1000", "truncated".
std::string dump_text(const Backtrace& bt);
// {"word_size":64,"frames":[{"kind":"pc","address":"0x1000","repeat":1},...],
//  "truncated":bool,"problem":null|"..."} — documented in docs/cbf.md.
std::string dump_json(const Backtrace& bt);

}  // namespace unwindkit::cbf
