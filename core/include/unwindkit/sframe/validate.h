// The strict reader's checks (notes §1 "What a strict reader checks", the Linux kernel's
// SFrame unwinder being the bar): everything decode() tolerates but an unwinder must not.
// Every problem is reported, not just the first; each Error names the section, the byte
// offset and the field. Never reads out of bounds, whatever the bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/section.h"  // AddressRange

namespace unwindkit::sframe {

// All problems found in the section at `section_address`, read as `format`. When `text` is
// not empty every function must lie inside one of its ranges.
std::vector<Error> validate(Bytes bytes, uint64_t section_address,
                            const std::vector<AddressRange>& text = {},
                            Format format = Format::SFrame);

}  // namespace unwindkit::sframe
