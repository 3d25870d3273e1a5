// Unwinds the state a Mach-O chain recorded when it ran (tests/fixtures-src/macho/chain/)
// with the core's walker, compact unwind its only rule source, and compares every frame
// with what the chain's own call sequences recorded: return address (the `call`/`bl`
// instruction's own label and the callee's __builtin_return_address), stack pointer, frame
// pointer and every callee-saved register (x86_64 rbx rbp r12-r15; arm64 x19-x28 fp d8-d15).
// A DWARF-mode function's rule comes from the image's __eh_frame through the core's DWARF
// handover (compact_unwind::dwarf_rule), as the CLI and the plugins take it.
//
// usage: compact_unwind_run_check IMAGE STATE
// Prints one line per frame and `mode NAME` for every mode it unwound through; exits 1 on
// any mismatch or any frame it could not unwind.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/encoding.h"
#include "unwindkit/compact_unwind/lookup.h"
#include "unwindkit/compact_unwind/report.h"
#include "unwindkit/compact_unwind/unwind_info.h"
#include "unwindkit/macho/macho_file.h"
#include "unwindkit/stepper.h"
#include "unwindkit/unwind/walker.h"
#include "chain.h"  // tests/fixtures-src/macho/chain/

namespace {

using namespace unwindkit;
namespace cu = unwindkit::compact_unwind;

struct State {
  std::string arch;
  uint64_t pc = 0;
  std::map<uint16_t, uint64_t> regs;
  uint64_t depth = 0;
  std::map<uint64_t, std::vector<uint64_t>> recs;
  uint64_t stack_base = 0;
  std::vector<uint64_t> stack;
};

bool parse_state(const std::string& path, State& s) {
  std::ifstream in(path);
  std::string line;
  bool in_stack = false;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    if (in_stack) {
      uint64_t w = 0;
      ls >> std::hex >> w;
      s.stack.push_back(w);
      continue;
    }
    std::string key;
    ls >> key;
    if (key == "arch") {
      ls >> s.arch;
    } else if (key == "pc") {
      ls >> std::hex >> s.pc;
    } else if (key == "reg") {
      unsigned n = 0;
      uint64_t v = 0;
      ls >> std::dec >> n >> std::hex >> v;
      s.regs[static_cast<uint16_t>(n)] = v;
    } else if (key == "depth") {
      ls >> std::dec >> s.depth;
    } else if (key == "rec") {
      uint64_t i = 0;
      ls >> std::dec >> i;
      std::vector<uint64_t> words(CHAIN_REC_WORDS);
      for (auto& w : words) ls >> std::hex >> w;
      s.recs[i] = words;
    } else if (key == "stack") {
      uint64_t size = 0;
      ls >> std::hex >> s.stack_base >> size;
      in_stack = true;
    }
  }
  return !s.arch.empty() && s.depth > 0 && s.recs.size() == s.depth + 1 && !s.stack.empty();
}

// The stack the runner copied: every read outside it fails, as in a core file.
class StackCopy : public MemoryReader {
 public:
  StackCopy(uint64_t base, const std::vector<uint64_t>& words) : base_(base), words_(words) {}
  bool read(uint64_t addr, std::span<uint8_t> out) const override {
    const uint64_t size = words_.size() * 8;
    if (addr < base_ || addr - base_ > size || out.size() > size - (addr - base_)) return false;
    std::memcpy(out.data(), reinterpret_cast<const uint8_t*>(words_.data()) + (addr - base_),
                out.size());
    return true;
  }

 private:
  uint64_t base_;
  const std::vector<uint64_t>& words_;
};

// A callee-saved register and the record word the call sequence stored it in.
struct Checked {
  const char* name;
  uint16_t reg;
  unsigned word;
};

const std::vector<Checked>& checked_registers(Arch arch) {
  static const std::vector<Checked> x86 = {
      {"rsp", reg::x86_64::rsp, X86_REC_RSP}, {"rbp", reg::x86_64::rbp, X86_REC_RBP},
      {"rbx", reg::x86_64::rbx, X86_REC_RBX}, {"r12", reg::x86_64::r12, X86_REC_R12},
      {"r13", reg::x86_64::r13, X86_REC_R13}, {"r14", reg::x86_64::r14, X86_REC_R14},
      {"r15", reg::x86_64::r15, X86_REC_R15}};
  static const std::vector<Checked> a64 = [] {
    static const char* const xn[] = {"x19", "x20", "x21", "x22", "x23",
                                     "x24", "x25", "x26", "x27", "x28"};
    static const char* const dn[] = {"d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15"};
    std::vector<Checked> v = {{"sp", reg::aarch64::sp, A64_REC_SP},
                              {"fp", reg::aarch64::x29, A64_REC_FP}};
    for (unsigned i = 0; i < 10; ++i)
      v.push_back({xn[i], static_cast<uint16_t>(reg::aarch64::x19 + i), A64_REC_X19 + i});
    for (unsigned i = 0; i < 8; ++i)
      v.push_back({dn[i], static_cast<uint16_t>(reg::aarch64::d8 + i), A64_REC_D8 + i});
    return v;
  }();
  return arch == Arch::AArch64 ? a64 : x86;
}

std::string symbol_at(const macho::Slice& slice, uint64_t addr) {
  const macho::Symbol* best = nullptr;
  for (const auto& s : slice.symbols())
    if (s.sect != 0 && s.value <= addr && (!best || s.value > best->value)) best = &s;
  return best ? best->name : "?";
}

int run(const std::string& image, const std::string& state_path) {
  State st;
  if (!parse_state(state_path, st)) {
    std::cerr << "cannot read the runner's state from " << state_path << "\n";
    return 1;
  }
  auto file = macho::MachOFile::open(image);
  if (!file) {
    std::cerr << image << ": " << file.error().to_string() << "\n";
    return 1;
  }
  auto slice_r = file->select(st.arch);
  if (!slice_r) {
    std::cerr << image << ": " << slice_r.error().to_string() << "\n";
    return 1;
  }
  const macho::Slice& slice = **slice_r;
  const Arch arch = *slice.arch();
  const macho::Section* sec = slice.section("__TEXT", cu::kUnwindInfoSection);
  if (!sec) {
    std::cerr << image << ": no __unwind_info\n";
    return 1;
  }
  auto info = cu::decode_unwind_info(sec->data);
  if (!info) {
    std::cerr << image << ": " << info.error().to_string() << "\n";
    return 1;
  }

  const bool a64 = arch == Arch::AArch64;
  const unsigned ret_word = a64 ? A64_REC_RET : X86_REC_RET;
  const unsigned ra_word = a64 ? A64_REC_RA : X86_REC_RA;
  RegisterSet regs(arch);
  for (const auto& [n, v] : st.regs) regs.set(n, v);
  regs.set_pc(st.pc);
  const StackCopy mem(st.stack_base, st.stack);

  // The image as the one module, at its link-time addresses, unwound by the core's walker
  // with compact unwind as its only source.
  unwind::ModuleMap modules;
  std::vector<unwind::Mapping> mappings;
  for (const auto& seg : slice.segments())
    if (seg.filesize != 0) mappings.push_back({seg.vmaddr, seg.vmaddr + seg.vmsize, seg.fileoff});
  modules.add(unwind::Module(image, image, std::move(mappings))).set_bias(0);
  unwind::WalkOptions options;
  options.sources = unwind::builtin_sources({Source::CompactUnwind});
  options.max_depth = st.depth + 1;
  const unwind::Walk walk = unwind::walk(regs, modules, mem, options);

  int failures = 0;
  std::set<std::string> modes;
  unsigned frame = 0;
  for (uint64_t idx = st.depth; idx > 0; --idx, ++frame) {
    if (frame + 1 >= walk.frames.size()) {
      std::cout << fmt::format("FAIL frame {}: the walk stopped: {}\n", frame, walk.stop_reason);
      return 1;
    }
    const unwind::Frame& f = walk.frames[frame];
    auto entry = cu::lookup(*info, slice.image_base(), f.address.lookup_address());
    if (!entry || !*entry || !f.rule) {
      std::cout << fmt::format("FAIL frame {} pc {:#x}: no compact unwind entry\n", frame, f.pc());
      return 1;
    }
    const cu::Entry& e = **entry;
    auto decoded = cu::decode_encoding(arch, e.encoding);
    const std::string mode(decoded ? cu::mode_name(arch, decoded->mode) : "?");
    std::cout << fmt::format("frame {} pc {:#x} function {} start {:#x} encoding {:#010x} mode {}\n",
                             frame, f.pc(), symbol_at(slice, e.function_start), e.function_start,
                             e.encoding, mode);
    modes.insert(mode);
    std::cout << "  rule " << describe(*f.rule) << "\n";
    const RegisterSet& caller = walk.frames[frame + 1].regs;
    const std::vector<uint64_t>& rec = st.recs[idx - 1];     // the caller's call site
    const std::vector<uint64_t>& callee = st.recs[idx];      // this frame's own record
    std::string checked;
    auto check = [&](const char* name, std::optional<uint64_t> ours, uint64_t truth,
                     const char* source) {
      checked += std::string(" ") + name;
      if (ours && *ours == truth) return;
      ++failures;
      std::cout << fmt::format("  MISMATCH {}: ours {} recorded {:#x} ({})\n", name,
                               ours ? fmt::format("{:#x}", *ours) : "unknown", truth, source);
    };
    check("ret", caller.pc(), rec[ret_word], "label after the caller's call");
    check("ra", caller.pc(), callee[ra_word], "__builtin_return_address in this frame");
    for (const Checked& c : checked_registers(arch))
      check(c.name, caller.get(c.reg), rec[c.word], "caller's call sequence");
    std::cout << "  caller checked:" << checked << "\n";
  }
  // Above the entry function is the runner: Linux code the image does not cover, so the walk
  // must end there for want of a rule.
  if (walk.frames.size() != st.depth + 1 || walk.frames.back().source ||
      walk.stop != unwind::StopKind::NoUnwindInfo) {
    std::cout << "FAIL the walk did not end at the runner's return address: " << walk.stop_reason
              << "\n";
    ++failures;
  }
  for (const auto& m : modes) std::cout << "mode " << m << "\n";
  std::cout << fmt::format("{} frames, {} mismatches\n", frame, failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: compact_unwind_run_check IMAGE STATE\n";
    return 2;
  }
  return run(argv[1], argv[2]);
}
