// Decoding and validating a `.trace` section: pure functions of its bytes.
#pragma once

#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/trace/section.h"

namespace unwindkit::trace {

// `pointer_size` (4 or 8) is the width of the HDR's code-begin field; RTN32 and RTN64
// records name their own width. Fails at the first structural problem (unknown tag, a cut
// record, a bad HDR, a file index out of range): an Error naming ".trace", offset and field.
Result<Section> decode(Bytes bytes, unsigned pointer_size);

// Every problem, in section order: what decode would fail on (reading on past each unknown
// byte), plus consistency checks: RTN alignment and pad byte, HDR version, ranges outside
// their module's code range, empty-name routines.
std::vector<Error> validate(Bytes bytes, unsigned pointer_size);

}  // namespace unwindkit::trace
