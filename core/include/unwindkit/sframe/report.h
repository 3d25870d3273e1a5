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

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/file_report.h"
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

// The dump document of docs/sframe-json.md for one file's decoded section.
std::string dump_json(const FileTable& file);
// The same document in pieces read straight from the section's bytes one function at a time:
// built whole, a 1,000,000-function section's (1.6 GB of text) took 8.7 GB of memory. The
// bytes are read whole before the first piece, as decode() reads them: a section it refuses
// gets its Error, and `sink` nothing.
Result<void> dump_json(const std::string& file, Bytes bytes, uint64_t section_address,
                       Format format, const Sink& sink);

// One file's section as the debugger commands read it, straight from its bytes (in a file or
// a debugger's module: a large section decoded takes six times its size), or why it has none.
struct FileSection {
  std::string file;
  std::optional<Bytes> bytes;  // none: `problem` says why (empty: the file has no .sframe)
  uint64_t address = 0;        // the section's link-time address
  Format format = Format::SFrame;
  std::string problem;
};
// readelf --sframe's text for one file, or "FILE: problem" (a section decode() refuses: its
// Error); several files each under a "FILE:" line.
void dump_text(const std::vector<FileSection>& files, const Sink& sink);
// An array of the files' documents (a file without a section: the document's "error" form),
// for a command covering every module that matches (the LLDB plugin's).
void dump_json(const std::vector<FileSection>& files, const Sink& sink);

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
