// SFrame (v1, v2, v3): the one entry point. Decoding is a pure function of the section's
// bytes and its address; lookup lowers the row that covers a PC into the shared rule model.
// (Contract shared with the stepper and the plugins; the implementation lives in
// core/src/sframe/.)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/section.h"  // the decoded section

namespace unwindkit::sframe {

// Decodes a whole section located at `section_address`, read as `format` (its section's
// name says which: find_section() in elf_section.h). Errors name the section (".sframe",
// ".ctf_frame"), the byte offset and the field. Decoding checks structure; `validate`
// (sframe/validate.h) checks more. A CTF Frame section decodes into the model of an SFrame v1
// one (Header::format says which it was), so it dumps, looks up and lowers like one.
Result<Section> decode(Bytes bytes, uint64_t section_address, Format format = Format::SFrame);

// Each function's [start, end) in FDE order, as the function index states them, one at a time
// to `visit`, which returns whether to go on (no vector: a 1 M-function section's extents are
// 16 MB of memory to fault in). The header and each function's index entry are read (failing
// with decode()'s Error where they cannot be), no row and no v3 attribute record. For a
// caller that needs extents alone.
Result<void> visit_function_ranges(Bytes bytes, uint64_t section_address, Format format,
                                   const std::function<bool(const AddressRange&)>& visit);

// The function holding `pc`, if any, and the lowest start above `pc` (nullopt: none), as a
// scan of visit_function_ranges() finds them. A section whose header says its functions are sorted
// is read only up to the first function past `pc`: O(distance), not O(functions). A header
// that lies about the order fails validate(); here it can only end the scan early.
struct FunctionsAround {
  std::optional<AddressRange> holding;
  std::optional<uint64_t> next_start;
};
Result<FunctionsAround> functions_around(Bytes bytes, uint64_t section_address, Format format,
                                         uint64_t pc);

// For a bare section image with no name: CTF Frame when its bytes are a consistent CTF Frame
// header and not a consistent SFrame one (the two share magic and version 1; only the header
// whose sub-sections end exactly at the image's end is believed), else SFrame.
Format detect_format(Bytes bytes);

// The rule for `pc`: nullopt when no function covers `pc` (a gap, or outside the section).
Result<std::optional<UnwindRule>> lookup(const Section& section, uint64_t pc);

}  // namespace unwindkit::sframe
