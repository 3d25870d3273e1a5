// What `unwindkit sframe dump|lookup|check` print, the same in the CLI and both debugger
// plugins: each front end only finds the table and chooses where the text goes and the exit
// code. JSON schema: docs/sframe-json.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/error.h"
#include "unwindkit/rules.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

// One file's table as a dump sees it: decoded, or why not.
struct FileTable {
  std::string file;
  const Section* section = nullptr;  // null: `problem` says why
  std::string problem;               // the decode error; empty: the file has no .sframe
  size_t size = 0;                   // bytes of the section
};

// readelf --sframe's text for one file ("FILE: problem" when it has none); several files
// each under a "FILE:" line.
std::string dump_text(const std::vector<FileTable>& files);
// The dump document of docs/sframe-json.md for one file.
std::string dump_json(const FileTable& file);
// An array of them, for a command covering every module that matches (the LLDB plugin's).
std::string dump_json(const std::vector<FileTable>& files);

// The rule at `pc` in `file`, or why there is none. `shift` is added to the function's range
// to print it where `pc` lives (a debugger's load bias when the rule has link-time addresses).
std::string lookup_text(std::string_view file, uint64_t pc, uint64_t shift,
                        const Result<std::optional<UnwindRule>>& rule);
// {"pc", "found", "rule"} of docs/sframe-json.md.
std::string lookup_json(uint64_t pc, const std::optional<UnwindRule>& rule);

// Every problem of the strict checks, "FILE: problem" each, then "FILE: N problems", or
// "FILE: .sframe OK" (".ctf_frame OK" for a CTF Frame section).
std::string check_text(std::string_view file, const std::vector<Error>& problems,
                       Format format = Format::SFrame);

}  // namespace unwindkit::sframe
