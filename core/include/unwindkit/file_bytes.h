// A whole file's bytes, for the readers that parse a file held in memory (ELF, Mach-O, cores,
// the CLI's raw sections).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"

namespace unwindkit {

// Read with the system's read(): a regular file up to the size it had when opened, anything
// else (a pipe) to its end. A file that cannot be opened or read, a directory included, is an
// Error (kind Io, section `path`, field "file", the system's message). The stream iterators
// read a character at a time (0.55 s of a 76 MB module's `unwindkit dump`) and threw
// std::ios_base::failure on a directory, which ended the CLI with an abort.
Result<std::vector<uint8_t>> read_file(const std::string& path);

// A file's bytes and what keeps them alive.
struct FileImage {
  std::shared_ptr<const void> owner;
  Bytes bytes;
};
// The file mapped read-only where it is a regular file that is not empty: only the pages used
// are ever read (a core of 1,000 threads is 266 MB, a 1,000,000-function module 76 MB, of which
// a backtrace reads a few pages), and nothing is copied. A file truncated while mapped faults
// (SIGBUS) on access. Anything else, or a file that cannot be mapped, is read (read_file), with
// its Error.
Result<FileImage> map_file(const std::string& path);

}  // namespace unwindkit
