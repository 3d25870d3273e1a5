// SFrame (v1, v2, v3): the one entry point. Decoding is a pure function of the section's
// bytes and its address; lookup lowers the row that covers a PC into the shared rule model.
// (Contract shared with the stepper and the plugins; the implementation lives in
// core/src/sframe/.)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/section.h"  // the decoded section

namespace unwindkit::sframe {

// Decodes a whole section located at `section_address`. Errors name ".sframe", the byte
// offset and the field. Decoding checks structure; `validate` (sframe/validate.h) checks more.
Result<Section> decode(Bytes bytes, uint64_t section_address);

// The rule for `pc`: nullopt when no function covers `pc` (a gap, or outside the section).
Result<std::optional<UnwindRule>> lookup(const Section& section, uint64_t pc);

}  // namespace unwindkit::sframe
