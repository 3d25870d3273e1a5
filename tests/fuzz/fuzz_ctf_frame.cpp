// Fuzzes the SFrame reader on CTF Frame (`.ctf_frame`) bytes (sframe_family.h says what is
// checked), and the raw-section format detection, which reads the header as both formats.
#include "sframe_family.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)unwindkit::sframe::detect_format(unwindkit::Bytes(data, size));
  return fuzz_sframe_family(data, size, unwindkit::sframe::Format::CtfFrame);
}
