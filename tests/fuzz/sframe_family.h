// The body of the SFrame-family fuzz targets (fuzz_sframe: .sframe, fuzz_ctf_frame: CTF
// Frame): decode, validate, the rows by rule, dump, and lookups at a few PCs (every
// function's first and last byte, the bytes just outside, and every row's first byte).
// Nothing may crash or hang; the Index and the dump from the bytes must agree with the decoded
// section (same Error; same rules, same text), and visit_rule_rows with validate() (the same
// problems).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/rule_rows.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"

inline int fuzz_sframe_family(const uint8_t* data, size_t size, unwindkit::sframe::Format format) {
  using namespace unwindkit;
  const Bytes bytes(data, size);
  constexpr uint64_t kAddress = 0x400000;
  const std::vector<sframe::AddressRange> text = {{0x1000, 0x500000}};
  const std::vector<Error> problems = sframe::validate(bytes, kAddress, text, format);
  size_t sum = problems.size();
  auto visit = [&](const sframe::FunctionRules& fn, std::span<const UnwindRule> rules) {
    for (const sframe::RuleRow& row : fn.rows) sum += rules[row.rule].cfa.offset != 0;
  };
  if (sframe::visit_rule_rows(bytes, kAddress, text, format, visit) != problems) __builtin_trap();
  auto s = sframe::decode(bytes, kAddress, format);
  auto index = sframe::Index::build(bytes, kAddress, format);
  if (bool(s) != bool(index) || (!s && s.error() != index.error())) __builtin_trap();
  std::string streamed;
  auto dumped = sframe::dump(bytes, kAddress, format,
                             [&](std::string_view piece) { streamed.append(piece); });
  if (bool(s) != bool(dumped) || (!s && (s.error() != dumped.error() || !streamed.empty())))
    __builtin_trap();
  if (!s) return 0;
  if (sframe::dump(*s) != streamed) __builtin_trap();
  sum += streamed.size();
  for (const auto& f : s->fdes) {
    std::vector<uint64_t> pcs = {f.func_start - 1, f.func_start, f.func_end() - 1, f.func_end()};
    for (const auto& fre : f.fres) pcs.push_back(f.func_start + fre.start_offset);
    for (uint64_t pc : pcs) {
      auto r = sframe::lookup(*s, pc);
      if (r != index->lookup(pc)) __builtin_trap();
      if (r && r->has_value()) sum += static_cast<size_t>((*r)->cfa.offset);
    }
  }
  return sum == 0xdeadbeef ? 1 : 0;
}
