// Helpers for the prologue analyzer's tests: a function's table rows written as the CFA
// column of the CFI the assembler produced (readelf --debug-dump=frames-interp), and the
// claims at one pc.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <vector>

#include "unwindkit/prologue/analyzer.h"

namespace unwindkit::test {

struct CfaAt {
  uint64_t offset;  // from the function start
  uint16_t reg;     // CFA = reg + cfa
  int64_t cfa;
};

inline std::vector<prologue::TableRow> table(Arch arch, uint64_t start, uint64_t size,
                                             std::initializer_list<CfaAt> rows) {
  std::vector<prologue::TableRow> out;
  for (const CfaAt& r : rows) {
    prologue::TableRow row;
    row.start = start + r.offset;
    row.rule.arch = arch;
    row.rule.cfa = {CfaRule::Kind::RegOffset, r.reg, r.cfa};
    row.rule.func_start = start;
    row.rule.func_end = start + size;
    if (!out.empty()) out.back().end = row.start;
    out.push_back(row);
  }
  if (!out.empty()) out.back().end = start + size;
  return out;
}

// The registers claimed saved at `pc`, as reg → CFA offset.
inline std::map<uint16_t, int64_t> saved_at(const prologue::Analysis& a, uint64_t pc) {
  std::map<uint16_t, int64_t> out;
  if (const prologue::Region* r = a.at(pc))
    for (const SavedReg& s : r->saved) out[s.reg] = s.rule.offset;
  return out;
}

inline bool unchanged_at(const prologue::Analysis& a, uint64_t pc) {
  const prologue::Region* r = a.at(pc);
  return r != nullptr && r->others_unchanged;
}

}  // namespace unwindkit::test
