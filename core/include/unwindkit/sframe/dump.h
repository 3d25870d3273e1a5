// The text dump, identical to GNU `readelf --sframe` (and to `objdump --sframe` after its
// file-format lines): binutils 2.40's layout for v1 sections (the only binutils that prints
// v1), binutils 2.46's for v2 and v3. A pure function of the section.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

// "Contents of the SFrame section .sframe:" through the last function's rows, ending in "\n".
// A CTF Frame section is dumped as v1 is, its title, section and constants named as the CTF
// Frame patch names them ("Contents of the CTF Frame section .ctf_frame:", CTF_FRAME_VERSION_1).
std::string dump(const Section& section);
// The same text in consecutive pieces (each at most tens of kilobytes), for writing a large
// dump out as it is made.
void dump(const Section& section, const std::function<void(std::string_view)>& sink);
// The same pieces read straight from the section's bytes, holding one function's rows at a
// time (a large section decoded takes six times its size). The bytes are read whole before
// the first piece: a section decode() refuses gets its Error, and `sink` nothing.
Result<void> dump(Bytes bytes, uint64_t section_address, Format format,
                  const std::function<void(std::string_view)>& sink);

}  // namespace unwindkit::sframe
