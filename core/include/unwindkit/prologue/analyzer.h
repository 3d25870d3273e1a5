// The prologue analyzer: where a function saved its callee-saved registers, found from its
// code, for tables that do not say (SFrame states only CFA, FP and RA).
//
// A pure function of one function's code bytes and its unwind table's rows. It decodes the
// function once, linearly (Capstone; compilers put no data in .text), and follows a model of
// the frame (CFA - SP, CFA - FP, each callee-saved register: caller's value, saved at a CFA
// offset, or unknown) that it checks against the rows at every row boundary. Where the model
// and the rows disagree, or an instruction it does not model writes the stack pointer or an
// unsaved callee-saved register, it claims nothing from there on: a register nothing proves
// is unavailable, never guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "unwindkit/arch.h"
#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit::prologue {

// One row of a function's unwind table (an SFrame FRE lowered to the rule model), over [start, end).
struct TableRow {
  uint64_t start = 0;
  uint64_t end = 0;
  UnwindRule rule;
  bool operator==(const TableRow&) const = default;
};

// What the code proves about the callee-saved registers over [start, end): the state before
// each instruction there executes (a caller frame, whose pc is a return address, asks at
// pc - 1, inside its call instruction: the state at the call).
struct Region {
  uint64_t start = 0, end = 0;
  std::vector<SavedReg> saved;    // RegRule::at_cfa(offset) per register saved in this frame, sorted by reg
  bool others_unchanged = false;  // every callee-saved register not in `saved` still holds the caller's value
  bool operator==(const Region&) const = default;
};

// Why an analysis claims nothing from some point on (Analysis::stop_kind), for code that tells
// them apart (the report of `sframe check --registers`); the Error says where.
enum class StopKind : uint8_t {
  None,              // it did not stop
  NoAnalysis,        // no instruction model for the architecture
  NotCalled,         // the first row is not the frame of a function entered by a call (a
                     // fragment entered by a jump, whose entries were not given)
  FrameMismatch,     // the code's frame and a row's disagree
  RowInsideInstruction,
  CfaNotSpOrFp,      // a block's row computes the CFA from neither SP nor FP
  Unreached,         // a block no jump the analysis saw reaches
  TooManyTargets,
  Undecodable,       // no instruction decodes at some address
  Unsettled,         // the jumps' states did not settle
};

// The frame state at a jump: what the code it reaches starts from.
struct JumpState {
  std::optional<int64_t> cfa_minus_sp, cfa_minus_fp;  // when known
  std::vector<SavedReg> saved;      // RegRule::at_cfa(offset), sorted by reg
  std::vector<uint16_t> unchanged;  // callee-saved registers proven to hold the caller's value, sorted
  bool operator==(const JumpState&) const = default;
};

// A jump out of the function's code (a tail call, or into a cold fragment of it): a direct
// one to `to`, or an indirect one (no `to`), and the state before it.
struct Exit {
  uint64_t from = 0;
  std::optional<uint64_t> to;
  JumpState state;
  bool operator==(const Exit&) const = default;
};

// A jump from another function's code into this one's, at `at`, with the state it brings.
struct Entry {
  uint64_t at = 0;
  JumpState state;
};

struct Analysis {
  std::vector<Region> regions;   // sorted, contiguous, covering [func_start, func_end)
  bool fully_explained = false;  // every CFA change of the function is explained
  std::optional<Error> stopped;  // why the analysis gave up somewhere (unknown instruction ...), for reports
  StopKind stop_kind = StopKind::None;  // the kind of `stopped`
  std::vector<Exit> exits;       // by `from`; none once the analysis stopped before them
  // The region holding `pc`; nullptr outside the function.
  const Region* at(uint64_t pc) const;
};

// `code` is the function's bytes, [func_start, func_start + code.size()); `rows` its table's
// rows (any order; rows outside the code are ignored). Work is linear in the code's size.
// Without `entries` the function is entered by a call to its start; with them, only by those
// jumps (a cold fragment: entries_of(), fragments.h).
Analysis analyze(Arch arch, Bytes code, uint64_t func_start, std::span<const TableRow> rows,
                 std::span<const Entry> entries = {});

}  // namespace unwindkit::prologue
