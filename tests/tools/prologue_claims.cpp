// Prints the prologue analyzer's claims for every SFrame function of an ELF file, one JSON
// object per line, for test_prologue_oracle.py to hold against the file's .eh_frame CFI as
// readelf prints it:
//   {"start":N,"end":N,"explained":B,"stopped":"...","rows":[N,...],
//    "fragment":B,"regions":[{"start":N,"end":N,"saved":[[REG,OFFSET],...],"unchanged":B},...]}
// ("fragment": analyzed from the jumps into it, prologue/fragments.h)
// (REG a DWARF number, OFFSET from the CFA). The last line is {"functions":N,"seconds":S}:
// the analyses' own time, for the performance figure.
//
// usage: prologue_claims FILE
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/prologue/analyzer.h"
#include "unwindkit/prologue/fragments.h"
#include "unwindkit/sframe/function_rows.h"
#include "unwindkit/sframe/sframe.h"

using namespace unwindkit;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: prologue_claims FILE\n");
    return 2;
  }
  auto file = elf::ElfFile::open(argv[1]);
  if (!file) {
    std::fprintf(stderr, "%s\n", file.error().to_string().c_str());
    return 1;
  }
  const elf::Section* section = file->section(".sframe");
  if (section == nullptr) {
    std::fprintf(stderr, "%s: no .sframe\n", argv[1]);
    return 1;
  }
  auto sframe = sframe::decode(section->data, section->addr);
  if (!sframe) {
    std::fprintf(stderr, "%s\n", sframe.error().to_string().c_str());
    return 1;
  }
  std::chrono::duration<double> spent{};
  size_t functions = 0;
  // Each function with rows, by start: its rows and its analysis as entered by a call (what a
  // cold fragment's jumps come from); then a fragment's from the jumps into it, as the walker
  // and the side files make it (prologue/fragments.h), so that the oracle holds those too.
  std::map<uint64_t, std::vector<prologue::TableRow>> rows;
  std::map<uint64_t, prologue::Analysis> called;
  for (size_t i = 0; i < sframe->fdes.size(); ++i) {
    const sframe::Fde& fde = sframe->fdes[i];
    auto r = sframe::function_rows(*sframe, i);
    if (!r || r->empty()) continue;
    const Bytes code = file->bytes_at_address(fde.func_start, fde.size);
    if (code.size() != fde.size) continue;
    const auto begin = std::chrono::steady_clock::now();
    called.emplace(fde.func_start, prologue::analyze(sframe->arch(), code, fde.func_start, *r));
    spent += std::chrono::steady_clock::now() - begin;
    rows.emplace(fde.func_start, std::move(*r));
  }
  std::optional<prologue::JumpIndex> jumps;
  auto index = [&]() -> const prologue::JumpIndex& {
    if (!jumps) {
      std::vector<uint64_t> starts;
      for (const auto& [start, r] : rows) starts.push_back(start);
      jumps = prologue::JumpIndex::build(*file, sframe->arch(), starts);
    }
    return *jumps;
  };
  auto analysis_of = [&](uint64_t pc) -> const prologue::Analysis* {
    auto it = called.upper_bound(pc);
    if (it == called.begin()) return nullptr;
    --it;
    return pc < rows.at(it->first).front().rule.func_end ? &it->second : nullptr;
  };
  for (const auto& [start, fn_rows] : rows) {
    const uint64_t end = fn_rows.front().rule.func_end;
    const auto begin = std::chrono::steady_clock::now();
    prologue::FragmentMiss miss = prologue::FragmentMiss::None;
    const prologue::Analysis& first = called.at(start);
    const prologue::Analysis a =
        prologue::analyze_entered(first, *file, start, end, fn_rows, index, analysis_of, &miss);
    spent += std::chrono::steady_clock::now() - begin;
    ++functions;
    nlohmann::json out;
    out["start"] = start;
    out["end"] = end;
    out["explained"] = a.fully_explained;
    out["stopped"] = a.stopped ? a.stopped->to_string() : "";
    out["fragment"] = prologue::may_be_fragment(first) && miss == prologue::FragmentMiss::None;
    out["rows"] = nlohmann::json::array();
    for (const auto& row : fn_rows) out["rows"].push_back(row.start);
    out["regions"] = nlohmann::json::array();
    for (const prologue::Region& r : a.regions) {
      nlohmann::json saved = nlohmann::json::array();
      for (const SavedReg& s : r.saved) saved.push_back({s.reg, s.rule.offset});
      out["regions"].push_back(
          {{"start", r.start}, {"end", r.end}, {"saved", saved}, {"unchanged", r.others_unchanged}});
    }
    std::cout << out.dump() << '\n';
  }
  std::cout << nlohmann::json{{"functions", functions}, {"seconds", spent.count()}}.dump() << '\n';
  return 0;
}
