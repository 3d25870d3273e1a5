// Cold fragments: code a compiler moved out of a function (gcc's `FUNC.cold`: an abort(), a
// failed assert, a throw) that only jumps from that function enter. Its table's rows state the
// CFA, but its own code saves nothing: the hot part's saves are what an unwinder needs there.
// The fragment's frame at each jump into it is the hot code's at that jump, so the fragment is
// analyzed from those states (analyze()'s entries) when they can be proven to be all there
// are, and alike; else it claims nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "unwindkit/arch.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/prologue/analyzer.h"

namespace unwindkit::prologue {

// The direct jumps and calls of all of a module's code, by target: one linear pass (Capstone)
// over its executable sections, made once per module (unwind::Module keeps it).
class JumpIndex {
 public:
  struct Jump {
    uint64_t from = 0, to = 0;
    bool call = false;
  };

  // `starts`: the functions' starts (the unwind table's), sorted: the pass starts decoding
  // anew at each, as at a section's start. An index with nothing when Capstone does not decode
  // `arch` (built() is false).
  static JumpIndex build(const elf::ElfFile& file, Arch arch, std::span<const uint64_t> starts);

  bool built() const { return built_; }
  // The jumps and calls into [start, end) from outside it.
  std::vector<Jump> into(uint64_t start, uint64_t end) const;
  // Whether the code before `start` (one of the starts given) may run on into it: an
  // instruction there falls through, or the pass could not read the bytes up to it.
  bool falls_into(uint64_t start) const;

 private:
  bool built_ = false;
  std::vector<Jump> jumps_;       // sorted by `to`
  std::vector<uint64_t> entered_;  // sorted: the starts code before may run into
};

// Why a fragment's entries were not proven (FragmentEntries::miss).
enum class FragmentMiss : uint8_t {
  None,              // proven: `entries` hold them
  NoIndex,           // no jump index for the architecture
  NotEntered,        // no direct jump enters it (an indirect one may: nothing is known)
  Called,            // a call reaches it
  FallsInto,         // the code before it may run into it
  SeveralFunctions,  // jumps from more than one function, or from code no function holds
  SourceUnproven,    // the jumping function's analysis does not reach a jump
  StatesDisagree,    // the jumps' states differ, or the function's indirect jumps' do
  CfaDisagrees,      // a jump's CFA is not the fragment's row's at its target
};

struct FragmentEntries {
  std::vector<Entry> entries;  // for analyze(), when miss is None
  FragmentMiss miss = FragmentMiss::None;
  uint64_t source = 0;         // a jump's address, when one was found
};

// The analysis of the function holding `pc` (entered by a call), or nullptr when none does.
using AnalysisOf = std::function<const Analysis*(uint64_t pc)>;

// The fragment [start, end)'s entries, from the jumps into it: every one from one function,
// whose analysis proves its state at each, the same at all of them and at all the function's
// indirect jumps (a jump table's targets are not seen), with the CFA the fragment's `rows`
// state at the target; nothing calls it, and nothing runs into its start.
FragmentEntries entries_of(const JumpIndex& jumps, uint64_t start, uint64_t end,
                           std::span<const TableRow> rows, const AnalysisOf& analysis_of);

// Whether `a` is of code that may be a fragment: its first row is not the frame of a function
// entered by a call.
inline bool may_be_fragment(const Analysis& a) { return a.stop_kind == StopKind::NotCalled; }

// `called`, the analysis of [start, end) of `file` as entered by a call, made again from the
// function's entries when it may be a fragment and they are proven; else `called`. `jumps`
// gives the module's index (made at the first fragment: most functions are none). `miss`, when
// given, says why not (None: carried, or no fragment).
Analysis analyze_entered(Analysis called, const elf::ElfFile& file, uint64_t start, uint64_t end,
                         std::span<const TableRow> rows,
                         const std::function<const JumpIndex&()>& jumps,
                         const AnalysisOf& analysis_of, FragmentMiss* miss = nullptr);

}  // namespace unwindkit::prologue
