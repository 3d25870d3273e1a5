// Text views of decoded compact unwind tables; pure functions of the decoded model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "unwindkit/compact_unwind/encoding.h"
#include "unwindkit/compact_unwind/object_section.h"
#include "unwindkit/compact_unwind/unwind_info.h"

namespace unwindkit::compact_unwind {

// Exactly what `llvm-objdump --macho --unwind-info` prints for a linked image's section.
std::string dump_unwind_info(const UnwindInfo& info);

// Exactly what `llvm-objdump --macho --unwind-info` prints for an object's __compact_unwind.
std::string dump_object_section(const std::vector<ObjectEntry>& entries);

// One line per encoding's meaning: "STACK_IMMD cfa=sp+32 rbx=[cfa-24] rbp=[cfa-16]".
std::string describe_encoding(const DecodedEncoding& d);

// Every second-level entry with its address range and spelled-out encoding.
std::string dump_decoded(const UnwindInfo& info, Arch arch, uint64_t image_base);

}  // namespace unwindkit::compact_unwind
