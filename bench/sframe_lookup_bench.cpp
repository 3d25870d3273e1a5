// SFrame FRE lookup, ours (sframe::Index, what the plugins keep per module) against binutils'
// libsframe (sframe_find_fre), on the same v1 section and the same PCs; lookup on the fully
// decoded Section (the CLI's model) is timed too, for reference.
// Usage: sframe_lookup_bench SFRAME_BIN SECTION_ADDRESS [Google Benchmark flags]
// The PCs are 1<<16 addresses drawn with a fixed seed, each inside a function the section
// describes. Before timing, both must find a row for every PC and agree on its CFA offset:
// otherwise the two sides would be timing different work.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "libsframe.h"
#include "section_file.h"
#include "unwindkit/sframe/index.h"
#include "unwindkit/sframe/sframe.h"

namespace {

using unwindkit::bench::LibSframe;
namespace sframe = unwindkit::sframe;

constexpr size_t kPcCount = size_t{1} << 16;
constexpr uint64_t kSeed = 0x5f4a3e;

std::vector<uint64_t> random_pcs(const sframe::Section& s) {
  std::mt19937_64 rng(kSeed);
  std::vector<uint64_t> pcs;
  pcs.reserve(kPcCount);
  while (pcs.size() < kPcCount) {
    const sframe::Fde& fde = s.fdes[rng() % s.fdes.size()];
    if (fde.size == 0) continue;
    pcs.push_back(fde.func_start + rng() % fde.size);
  }
  return pcs;
}

// Exits unless the Index answers as the decoded section at every row's first and last byte
// and at every function's edges (the row table, checked on the section timed), and both
// sides find a row for every timed PC with the same CFA offset.
void check_agreement(const sframe::Section& s, const sframe::Index& index, LibSframe& lib,
                     const std::vector<uint64_t>& pcs) {
  size_t probes = 0;
  for (const sframe::Fde& fde : s.fdes) {
    std::vector<uint64_t> edges = {fde.func_start - 1, fde.func_end() - 1, fde.func_end()};
    for (const sframe::Fre& fre : fde.fres) {
      edges.push_back(fde.func_start + fre.start_offset);
      edges.push_back(fde.func_start + fre.start_offset - 1);
    }
    for (uint64_t pc : edges) {
      ++probes;
      if (index.lookup(pc) != sframe::lookup(s, pc)) {
        fmt::print(stderr, "pc {:#x}: the Index and the decoded section disagree\n", pc);
        std::exit(1);
      }
    }
  }
  fmt::print("agreement: the Index and the decoded section at {} row and function edges\n",
             probes);
  size_t disagree = 0;
  for (uint64_t pc : pcs) {
    auto ours = index.lookup(pc);
    if (ours != sframe::lookup(s, pc)) {
      fmt::print(stderr, "pc {:#x}: the Index and the decoded section disagree\n", pc);
      std::exit(1);
    }
    const bool found = ours && *ours;
    const bool theirs = lib.find_fre(static_cast<int32_t>(pc - s.address));
    const auto their_cfa = theirs ? lib.cfa_offset() : std::nullopt;
    if (!found || !their_cfa || (*ours)->cfa.offset != *their_cfa) {
      if (disagree++ < 5)
        fmt::print(stderr, "pc {:#x}: ours {} cfa {}, libsframe {} cfa {}\n", pc, found,
                   found ? (*ours)->cfa.offset : 0, theirs, their_cfa.value_or(0));
    }
  }
  if (disagree != 0) {
    fmt::print(stderr, "{} of {} PCs disagree: not benchmarking\n", disagree, pcs.size());
    std::exit(1);
  }
  fmt::print("agreement: {} PCs, both found a row, same CFA offset\n", pcs.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: {} SFRAME_BIN SECTION_ADDRESS [benchmark flags]\n", argv[0]);
    return 2;
  }
  const auto file = unwindkit::bench::load_section(argv[1], argv[2]);
  auto decoded = sframe::decode(file.bytes, file.address);
  if (!decoded || decoded->fdes.empty()) {
    fmt::print(stderr, "ours: cannot decode {}\n", argv[1]);
    return 1;
  }
  const sframe::Section& section = *decoded;
  auto index = sframe::Index::build(file.bytes, file.address);
  if (!index) {
    fmt::print(stderr, "ours: cannot index {}\n", argv[1]);
    return 1;
  }
  LibSframe lib(file.bytes);
  const std::vector<uint64_t> pcs = random_pcs(section);
  check_agreement(section, *index, lib, pcs);

  // One lookup per iteration, cycling through the PCs, so the figure is ns per lookup.
  benchmark::RegisterBenchmark("lookup/unwindkit", [&](benchmark::State& state) {
    size_t i = 0;
    for (auto _ : state) {
      benchmark::DoNotOptimize(index->lookup(pcs[i]));
      i = (i + 1) % pcs.size();
    }
  });
  benchmark::RegisterBenchmark("lookup/unwindkit-decoded", [&](benchmark::State& state) {
    size_t i = 0;
    for (auto _ : state) {
      benchmark::DoNotOptimize(sframe::lookup(section, pcs[i]));
      i = (i + 1) % pcs.size();
    }
  });
  benchmark::RegisterBenchmark("lookup/libsframe", [&](benchmark::State& state) {
    size_t i = 0;
    for (auto _ : state) {
      benchmark::DoNotOptimize(lib.find_fre(static_cast<int32_t>(pcs[i] - section.address)));
      i = (i + 1) % pcs.size();
    }
  });
  // Google Benchmark parses what follows the two positional arguments.
  argv[2] = argv[0];
  argc -= 2;
  argv += 2;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
