// Fuzzes `sframe build` on hostile CFI: the input is the contents of an x86_64 or AArch64
// (first byte's low bit) `.eh_frame`, placed in a minimal loadable ELF; the CFI is converted
// (FDE list, libdw rows, SFrame rows), encoded as v1, v2 and v3 for the address the new segment
// gets, validated, and written into the ELF copy. Nothing may crash or hang, and what the
// writer emits must pass our own validator and be in the copy where the plan put it.
#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "unwindkit/elf/constants.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/elf/segment_add.h"
#include "unwindkit/sframe/encode.h"
#include "unwindkit/sframe/from_cfi.h"
#include "unwindkit/sframe/validate.h"

#include "../unit/elf_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace unwindkit;
  if (size == 0) return 0;
  const uint16_t machine = (data[0] & 1) != 0 ? EM_AARCH64 : EM_X86_64;
  const test::ImageSection eh_frame{".eh_frame", {data + 1, size - 1}};
  auto file = elf::ElfFile::parse(
      std::make_shared<const std::vector<uint8_t>>(test::elf_image(machine, {&eh_frame, 1})),
      "fuzz");
  if (!file) return 0;
  auto plan = elf::plan_loaded_section(*file, elf::kSegmentGnuSFrame);
  if (!plan) __builtin_trap();  // the ELF above always has room
  for (uint8_t version : {sframe::kVersion1, sframe::kVersion2, sframe::kVersion3}) {
    auto conv = sframe::from_cfi(*file, version);
    if (!conv) continue;
    auto bytes = sframe::encode(conv->section, {version, version == sframe::kVersion3, plan->address});
    if (!bytes) continue;
    if (!sframe::validate(*bytes, plan->address).empty()) __builtin_trap();
    auto out = elf::add_loaded_section(*file, *plan, sframe::kSectionName,
                                       elf::kSegmentGnuSFrame, *bytes);
    if (!out) __builtin_trap();
    // The copy holds the section where the plan put it.
    auto copy = elf::ElfFile::parse(std::make_shared<const std::vector<uint8_t>>(out->whole()),
                                    "copy");
    const elf::Section* added = copy ? copy->section(sframe::kSectionName) : nullptr;
    if (added == nullptr || added->addr != plan->address ||
        !std::equal(added->data.begin(), added->data.end(), bytes->begin(), bytes->end()))
      __builtin_trap();
  }
  return 0;
}
