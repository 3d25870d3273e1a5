// The text dump, identical to GNU `readelf --sframe` (and to `objdump --sframe` after its
// file-format lines): binutils 2.40's layout for v1 sections (the only binutils that prints
// v1), binutils 2.46's for v2 and v3. A pure function of the decoded section.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

// "Contents of the SFrame section .sframe:" through the last function's rows, ending in "\n".
// A CTF Frame section is dumped as v1 is, its title, section and constants named as the CTF
// Frame patch names them ("Contents of the CTF Frame section .ctf_frame:", CTF_FRAME_VERSION_1).
std::string dump(const Section& section);
// The same text in consecutive pieces (each at most tens of kilobytes), for writing a large
// dump out as it is made.
void dump(const Section& section, const std::function<void(std::string_view)>& sink);

}  // namespace unwindkit::sframe
