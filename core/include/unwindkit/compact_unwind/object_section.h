// `__LD,__compact_unwind` in Mach-O object files: the compiler's per-function entries the
// linker turns into __unwind_info. Entries are 32 bytes in 64-bit objects (pointer-sized
// start, personality, LSDA) and 20 bytes in 32-bit ones. Relocations name what each pointer
// refers to; that naming follows llvm-objdump (symbol of an extern relocation, otherwise the
// nearest symbol at or below the value in the relocated section, otherwise the section).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/macho/macho_file.h"

namespace unwindkit::compact_unwind {

struct RelocTarget {
  std::string name;
  uint64_t addend = 0;
  bool operator==(const RelocTarget&) const = default;
};

struct ObjectEntry {
  uint32_t offset = 0;  // inside the section
  uint64_t function = 0;
  uint32_t length = 0;
  uint32_t encoding = 0;
  uint64_t personality = 0;
  uint64_t lsda = 0;
  std::optional<RelocTarget> function_target, personality_target, lsda_target;
  bool operator==(const ObjectEntry&) const = default;
};

// Decodes every whole entry of `section` (which belongs to `slice`); a trailing partial entry
// or a relocation inside an entry's encoding or length is an error.
Result<std::vector<ObjectEntry>> decode_object_section(const macho::Slice& slice,
                                                       const macho::Section& section);

// Every problem: size not a multiple of the entry size, relocations at unexpected places,
// encodings invalid for the slice's architecture.
std::vector<Error> validate_object_section(const macho::Slice& slice,
                                           const macho::Section& section);

}  // namespace unwindkit::compact_unwind
