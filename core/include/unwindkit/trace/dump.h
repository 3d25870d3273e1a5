// Views of a decoded `.trace` section: pure functions of the model.
#pragma once

#include <string>

#include "unwindkit/bytes.h"

#include "unwindkit/trace/section.h"

namespace unwindkit::trace {

// Record by record, carrying the information of Intel's `llvm-objdump --traceback`:
// ".trace contents:", then "OOOOOOOO: <hex bytes> # TB_TAG_x" per record with indented
// "(name: ...)", "(line: L, delta line: D)", "(PC: routine+0x.., delta PC: 0x..)" lines,
// and "# Align" for padding. `bytes` is the section the model was decoded from.
std::string dump_records(const Section& section, Bytes bytes);
// One row per range: routine, file, line, [start, end).
std::string dump_lines(const Section& section);
// The schema of docs/trace-json.md.
std::string dump_json(const Section& section);

}  // namespace unwindkit::trace
