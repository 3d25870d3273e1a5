// `unwindkit sframe verify FILE`: checks a module's SFrame section against its DWARF CFI.
// Both describe the same code, produced by the same assembler from the same CFI directives,
// so at every address the CFA rule, the RA location and the FP location must agree. Every
// SFrame row is compared over its whole address range, in steps of whichever row (SFrame
// or CFI) ends first. Exit 1 when any row disagrees.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "commands.h"
#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/sframe/section.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::cli {

namespace {

struct Tally {
  size_t compared = 0;   // address ranges compared
  size_t disagree = 0;
  size_t no_cfi = 0;     // SFrame rows over code no FDE covers
  size_t skipped = 0;    // CFI rows we cannot lower (expressions), PCMASK functions
};

// What the two tables must agree on; ranges and the source naturally differ.
std::string difference(const UnwindRule& s, const UnwindRule& c) {
  std::string out;
  auto add = [&](std::string_view what, const std::string& a, const std::string& b) {
    out += fmt::format("{}{}: sframe {} / cfi {}", out.empty() ? "" : "; ", what, a, b);
  };
  if (s.outermost() != c.outermost()) {
    add("ra", s.outermost() ? "undefined" : "defined", c.outermost() ? "undefined" : "defined");
    return out;
  }
  UnwindRule sa = s, ca = c;
  sa.saved.clear();
  ca.saved.clear();
  if (s.cfa != c.cfa || (!s.outermost() && (s.ra != c.ra || s.fp != c.fp))) {
    sa.signal_frame = ca.signal_frame = false;
    add("rule", describe(sa), describe(ca));
  }
  return out;
}

void verify_row(const sframe::Section& sf, const dwarf::CfiTables& cfi, uint64_t begin,
                uint64_t end, Tally& t) {
  for (uint64_t at = begin; at < end;) {
    auto s = sframe::lookup(sf, at);
    auto c = cfi.lookup(at);
    uint64_t next = end;
    if (!s || !*s) {
      fmt::print("{:#x}: sframe: {}\n", at, s ? "no row" : s.error().to_string());
      ++t.disagree;
    } else if (!c) {
      ++t.skipped;
    } else if (!*c) {
      ++t.no_cfi;
    } else {
      next = std::min(end, std::max(at + 1, (*c)->func_end));
      ++t.compared;
      if (auto d = difference(**s, **c); !d.empty()) {
        fmt::print("{:#x}..{:#x}: {}\n", at, next, d);
        ++t.disagree;
      }
    }
    at = next;
  }
}

int run_verify(const std::string& path) {
  auto elf = elf::ElfFile::open(path);
  if (!elf) {
    std::fprintf(stderr, "unwindkit: %s\n", elf.error().to_string().c_str());
    return kExitDataProblem;
  }
  const auto* section = elf->section(".sframe");
  if (!section || section->data.empty()) {
    std::fprintf(stderr, "unwindkit: %s: no .sframe section\n", path.c_str());
    return kExitDataProblem;
  }
  auto sf = sframe::decode(section->data, section->addr);
  if (!sf) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(), sf.error().to_string().c_str());
    return kExitDataProblem;
  }
  auto cfi = dwarf::CfiTables::open(*elf);
  if (!cfi || cfi->empty()) {
    std::fprintf(stderr, "unwindkit: %s: %s\n", path.c_str(),
                 cfi ? "no DWARF CFI (.eh_frame or .debug_frame) to compare with"
                     : cfi.error().to_string().c_str());
    return kExitDataProblem;
  }
  Tally t;
  for (const auto& fde : sf->fdes) {
    if (fde.pcmask()) {  // PLT stubs: the CFI describes them with an expression
      ++t.skipped;
      continue;
    }
    for (size_t i = 0; i < fde.fres.size(); ++i) {
      const uint64_t begin = fde.func_start + fde.fres[i].start_offset;
      const uint64_t end = i + 1 < fde.fres.size() ? fde.func_start + fde.fres[i + 1].start_offset
                                                   : fde.func_end();
      verify_row(*sf, *cfi, begin, std::min(end, fde.func_end()), t);
    }
  }
  fmt::print("{}: {} functions, {} ranges compared, {} disagreements, {} without CFI, {} skipped\n",
             path, sf->fdes.size(), t.compared, t.disagree, t.no_cfi, t.skipped);
  return t.disagree ? kExitDataProblem : kExitOk;
}

}  // namespace

void add_sframe_verify_command(CLI::App& app, int& exit_code) {
  CLI::App* group = sframe_group(app);
  auto path = std::make_shared<std::string>();
  CLI::App* verify = group->add_subcommand(
      "verify", "Compare every SFrame row with the DWARF CFI at the same addresses");
  verify->add_option("FILE", *path, "ELF file with .sframe and .eh_frame/.debug_frame")
      ->required()
      ->check(CLI::ExistingFile);
  verify->callback([path, &exit_code] { exit_code = run_verify(*path); });
}

}  // namespace unwindkit::cli
