// What `unwindkit cbf decode|encode` print, the same in the CLI and both debugger plugins:
// the CLI reads bytes from a file or text, the debuggers from memory and symbolize each
// address; the text around them is this.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "unwindkit/cbf/backtrace.h"
#include "unwindkit/cbf/dump.h"
#include "unwindkit/error.h"

namespace unwindkit::cbf {

struct DecodeReport {
  std::string text;
  // Set when a record could not be read at all (a bad info byte): "at ADDR: ... (not a CBF
  // record)"; the text holds the records before it. A front end reports it as its error.
  std::optional<std::string> error;
  bool problems = false;  // a record ended early (its text says why)
};

// The records decoded from bytes at `base` (a memory address; 0 for a file), each
// preceded by "at ADDR: " when there are several.
DecodeReport decode_report(const std::vector<Result<Backtrace>>& records, uint64_t base,
                           const Symbolizer& symbolize = {});
// {"records": [dump_json, ...]} (docs/cbf.md); records after a bad one are left out.
std::string decode_json(const std::vector<Result<Backtrace>>& records);

// How `cbf encode` shows the bytes it made.
struct EncodeShown {
  std::optional<uint64_t> thread;  // "thread N: F frames" first
  bool hex = true, base64 = false;
  std::string written;  // a file the bytes went to instead: "wrote FILE"
};

// Frames that are addresses (not omitted or truncated): what a plain array of words holds.
uint64_t address_frames(const std::vector<Run>& runs);
// "hex: ...", "base64: ..." (or "wrote FILE"), "size: N bytes (plain: M bytes)", where M is
// the address frames times the word size.
std::string encode_text(const std::vector<Run>& runs, WordSize word, std::span<const uint8_t> bytes,
                        const EncodeShown& shown);

}  // namespace unwindkit::cbf
