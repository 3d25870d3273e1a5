// A whole file's bytes, for the readers that parse a file held in memory (Mach-O, cores, the
// CLI's raw sections).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "unwindkit/error.h"

namespace unwindkit {

// Read with the system's read(): a regular file up to the size it had when opened, anything
// else (a pipe) to its end. A file that cannot be opened or read, a directory included, is an Error
// (kind Io, section `path`, field "file", the system's message). The stream iterators read a
// character at a time (0.6 s for a 76 MB module) and threw std::ios_base::failure on a
// directory, which ended the CLI with an abort.
Result<std::vector<uint8_t>> read_file(const std::string& path);

}  // namespace unwindkit
