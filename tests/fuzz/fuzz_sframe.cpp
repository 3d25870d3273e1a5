// Fuzzes the SFrame reader on `.sframe` bytes (sframe_family.h says what is checked).
#include "sframe_family.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_sframe_family(data, size, unwindkit::sframe::Format::SFrame);
}
