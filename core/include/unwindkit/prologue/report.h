// What the prologue analyzer proves of each SFrame function's callee-saved registers, and why
// not the rest: `unwindkit sframe check --registers`, what a distribution checking its SFrame
// builds runs. Asked where it matters, at each call instruction (where a caller frame stops:
// a debugger shows the registers of every frame above from the claims there); the analysis
// is the one the walker and the side files use, a cold fragment's from the jumps into it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"
#include "unwindkit/prologue/analyzer.h"
#include "unwindkit/prologue/fragments.h"

namespace unwindkit::prologue {

// Why a register is not proven at a call site.
enum class Unproven : uint8_t {
  Stopped,       // the analysis claims nothing there: it stopped before (Analysis::stop_kind)
  StoppedLater,  // it stopped further on: no register it did not see saved is claimed unchanged
  Changed,       // written without a save the analysis saw, restored, or the paths there disagree
};

struct CallSite {
  uint64_t at = 0;                  // the call instruction
  std::vector<SavedReg> saved;      // claimed at CFA + offset there
  std::vector<uint16_t> unchanged;  // claimed to hold the caller's value there
  bool operator==(const CallSite&) const = default;
};

struct RegisterVerdict {
  enum class Kind : uint8_t {
    Saved,      // at every call site, at CFA + offset (the first site's)
    Unchanged,  // at every call site
    Mixed,      // at every call site one way or the other (a call before its save)
    Unproven,   // not at call site `at`, for `why`
  };
  uint16_t reg = 0;
  Kind kind = Kind::Unproven;
  int64_t offset = 0;
  Unproven why = Unproven::Changed;
  uint64_t at = 0;
};

struct FunctionRegisters {
  uint64_t start = 0, end = 0;
  std::string name;                       // the symbol at `start`, when the file has one
  std::vector<CallSite> calls;            // in address order
  std::vector<RegisterVerdict> registers;  // each callee-saved register; none without calls
  StopKind stop = StopKind::None;
  std::string stopped;                     // the analysis's Error, as text
  bool fragment = false;                   // analyzed from the jumps into it
  FragmentMiss fragment_miss = FragmentMiss::None;  // it may be one; its entries are not proven
};

struct RegistersReport {
  Arch arch = Arch::X86_64;
  std::vector<FunctionRegisters> functions;  // the SFrame functions with rows, in address order
  // Register claims asked (each callee-saved register at each call site) and proven.
  size_t asked = 0, proven = 0;
};

// The report of `file`'s SFrame section (no section, or one that cannot be decoded: an Error).
Result<RegistersReport> registers_report(const elf::ElfFile& file);

std::string_view stop_kind_text(StopKind kind);
std::string_view fragment_miss_text(FragmentMiss miss);
std::string_view unproven_text(Unproven why);

// A line per function, then the totals.
std::string registers_text(std::string_view path, const RegistersReport& report);
// {"file", "arch", "asked", "proven", "functions": [{"start", "end", "name", "stop", "stopped",
//  "fragment", "fragment_miss", "calls": [{"at", "saved": [[reg, offset]...], "unchanged":
//  [reg...]}], "registers": [{"reg", "name", "kind", "offset"?, "why"?, "at"?}]}]}
std::string registers_json(std::string_view path, const RegistersReport& report);

}  // namespace unwindkit::prologue
