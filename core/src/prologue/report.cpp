// The registers report (report.h): each SFrame function analyzed as the walker analyzes it,
// its call instructions found by decoding it once more, and the claims at each.
#include "unwindkit/prologue/report.h"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "decoder.h"
#include "unwindkit/prologue/lower.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/sframe/function_rows.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::prologue {

std::string_view stop_kind_text(StopKind kind) {
  switch (kind) {
    case StopKind::None: return "explained";
    case StopKind::NoAnalysis: return "no instruction model for the architecture";
    case StopKind::NotCalled: return "its first row is not a called function's frame";
    case StopKind::FrameMismatch: return "the code's frame and a row disagree";
    case StopKind::RowInsideInstruction: return "a row starts inside an instruction";
    case StopKind::CfaNotSpOrFp: return "a block's CFA is based on neither SP nor FP";
    case StopKind::Unreached: return "a block no jump seen reaches";
    case StopKind::TooManyTargets: return "too many jump targets";
    case StopKind::Undecodable: return "bytes that decode to no instruction";
    case StopKind::Unsettled: return "the jumps' states did not settle";
  }
  return "?";
}

std::string_view fragment_miss_text(FragmentMiss miss) {
  switch (miss) {
    case FragmentMiss::None: return "entries proven";
    case FragmentMiss::NoIndex: return "no jump index for the architecture";
    case FragmentMiss::NotEntered: return "no direct jump enters it";
    case FragmentMiss::Called: return "a call reaches it";
    case FragmentMiss::FallsInto: return "the code before it may run into it";
    case FragmentMiss::SeveralFunctions: return "jumps from more than one function";
    case FragmentMiss::SourceUnproven: return "the jumping function's state is not proven";
    case FragmentMiss::StatesDisagree: return "the jumps' states differ";
    case FragmentMiss::CfaDisagrees: return "a jump's CFA is not the fragment's";
  }
  return "?";
}

std::string_view unproven_text(Unproven why) {
  switch (why) {
    case Unproven::Stopped: return "the analysis stopped before";
    case Unproven::StoppedLater: return "the analysis stopped further on";
    case Unproven::Changed: return "changed, restored, or the paths disagree";
  }
  return "?";
}

namespace {

// The call instructions of [start, start + code.size()).
std::vector<uint64_t> call_sites(Arch arch, Bytes code, uint64_t start) {
  std::vector<uint64_t> out;
  detail::Decoder* d = detail::Decoder::for_arch(arch);
  if (d == nullptr) return out;
  const uint8_t* p = code.data();
  size_t left = code.size();
  uint64_t at = start;
  for (uint64_t here = at; cs_disasm_iter(d->handle(), &p, &left, &at, d->insn()); here = at)
    if (detail::is_call(arch, *d->insn()) || cs_insn_group(d->handle(), d->insn(), CS_GRP_CALL))
      out.push_back(here);
  return out;
}

CallSite claims_at(const Analysis& a, uint64_t at, Arch arch) {
  CallSite site{at, {}, {}};
  const Region* r = a.at(at);
  if (r == nullptr) return site;
  site.saved = r->saved;
  if (r->others_unchanged)
    for (uint16_t reg : callee_saved_registers(arch))
      if (std::none_of(r->saved.begin(), r->saved.end(),
                       [&](const SavedReg& s) { return s.reg == reg; }))
        site.unchanged.push_back(reg);
  return site;
}

RegisterVerdict verdict(uint16_t reg, const FunctionRegisters& fn, const Analysis& a) {
  RegisterVerdict v{reg, RegisterVerdict::Kind::Unproven, 0, Unproven::Changed, 0};
  bool saved = false, unchanged = false;
  for (const CallSite& c : fn.calls) {
    const auto slot = std::find_if(c.saved.begin(), c.saved.end(),
                                   [&](const SavedReg& s) { return s.reg == reg; });
    if (slot != c.saved.end()) {
      if (!saved) v.offset = slot->rule.offset;
      saved = true;
    } else if (std::binary_search(c.unchanged.begin(), c.unchanged.end(), reg)) {
      unchanged = true;
    } else {
      v.at = c.at;
      v.why = !a.stopped                          ? Unproven::Changed
              : c.at >= fn.start + a.stopped->offset ? Unproven::Stopped
                                                    : Unproven::StoppedLater;
      return v;
    }
  }
  v.kind = saved && unchanged ? RegisterVerdict::Kind::Mixed
           : saved            ? RegisterVerdict::Kind::Saved
                              : RegisterVerdict::Kind::Unchanged;
  return v;
}

}  // namespace

Result<RegistersReport> registers_report(const elf::ElfFile& file) {
  const auto found = sframe::find_section(file);
  if (!found) return fail(ErrorKind::NotFound, "ELF", 0, ".sframe", "no SFrame section");
  auto bytes = sframe::section_bytes(file, *found);
  if (!bytes) return tl::unexpected(bytes.error());
  auto section = sframe::decode(*bytes, found->section->addr, found->format);
  if (!section) return tl::unexpected(section.error());
  RegistersReport out;
  out.arch = section->arch();

  std::map<uint64_t, std::string> names;
  if (auto symbols = file.symbols())
    for (const elf::Symbol& s : *symbols)
      if (s.type == STT_FUNC && s.value != 0 && !s.name.empty()) names.emplace(s.value, s.name);

  // Each function with rows, by start, and its analysis as entered by a call: what a
  // fragment's jumps come from.
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t i = 0; i < section->fdes.size(); ++i)
    if (!section->fdes[i].pcmask()) order.emplace_back(section->fdes[i].func_start, i);
  std::sort(order.begin(), order.end());
  std::map<uint64_t, std::vector<TableRow>> rows;
  std::map<uint64_t, Analysis> called;
  for (const auto& [start, i] : order) {
    auto r = sframe::function_rows(*section, i);
    if (!r || r->empty()) continue;
    const sframe::Fde& fde = section->fdes[i];
    called.emplace(start, analyze_function(file, out.arch, start, fde.func_end(), *r));
    rows.emplace(start, std::move(*r));
  }
  std::optional<JumpIndex> jumps;
  auto index = [&]() -> const JumpIndex& {
    if (!jumps) {
      std::vector<uint64_t> starts;
      for (const auto& [start, i] : order) starts.push_back(start);
      jumps = JumpIndex::build(file, out.arch, starts);
    }
    return *jumps;
  };
  auto analysis_of = [&](uint64_t pc) -> const Analysis* {
    auto it = called.upper_bound(pc);
    if (it == called.begin()) return nullptr;
    --it;
    const auto& r = rows.at(it->first);
    return pc < r.front().rule.func_end ? &it->second : nullptr;
  };

  for (const auto& [start, fn_rows] : rows) {
    FunctionRegisters fn;
    fn.start = start;
    fn.end = fn_rows.front().rule.func_end;
    if (auto n = names.find(start); n != names.end()) fn.name = n->second;
    const Analysis& first = called.at(start);
    FragmentMiss miss = FragmentMiss::None;
    const Analysis a =
        analyze_entered(first, file, fn.start, fn.end, fn_rows, index, analysis_of, &miss);
    fn.fragment = may_be_fragment(first) && miss == FragmentMiss::None;
    fn.fragment_miss = miss;
    fn.stop = a.stop_kind;
    if (a.stopped) fn.stopped = a.stopped->to_string();
    const Bytes code = file.bytes_at_address(fn.start, fn.end - fn.start);
    if (code.size() == fn.end - fn.start)
      for (uint64_t at : call_sites(out.arch, code, fn.start))
        fn.calls.push_back(claims_at(a, at, out.arch));
    if (!fn.calls.empty())
      for (uint16_t reg : callee_saved_registers(out.arch)) {
        fn.registers.push_back(verdict(reg, fn, a));
        for (const CallSite& c : fn.calls) {
          ++out.asked;
          if (std::binary_search(c.unchanged.begin(), c.unchanged.end(), reg) ||
              std::any_of(c.saved.begin(), c.saved.end(),
                          [&](const SavedReg& s) { return s.reg == reg; }))
            ++out.proven;
        }
      }
    out.functions.push_back(std::move(fn));
  }
  return out;
}

namespace {

std::string_view kind_name(RegisterVerdict::Kind kind) {
  switch (kind) {
    case RegisterVerdict::Kind::Saved: return "saved";
    case RegisterVerdict::Kind::Unchanged: return "unchanged";
    case RegisterVerdict::Kind::Mixed: return "mixed";
    case RegisterVerdict::Kind::Unproven: return "unproven";
  }
  return "?";
}

std::string percent(size_t part, size_t whole) {
  return whole == 0 ? "-" : fmt::format("{:.1f} %", 100.0 * double(part) / double(whole));
}

}  // namespace

std::string registers_text(std::string_view path, const RegistersReport& report) {
  std::string out = fmt::format("{}: {} SFrame functions ({})\n", path, report.functions.size(),
                                arch_name(report.arch));
  for (const FunctionRegisters& fn : report.functions) {
    out += fmt::format("{:#x}..{:#x} {}", fn.start, fn.end, fn.name.empty() ? "?" : fn.name);
    if (fn.fragment) out += " [fragment: from the jumps into it]";
    if (fn.fragment_miss != FragmentMiss::None)
      out += fmt::format(" [fragment? {}]", fragment_miss_text(fn.fragment_miss));
    if (fn.stop != StopKind::None)
      out += fmt::format(" [stopped: {}: {}]", stop_kind_text(fn.stop), fn.stopped);
    out += fmt::format(": {} call{}", fn.calls.size(), fn.calls.size() == 1 ? "" : "s");
    for (const RegisterVerdict& v : fn.registers) {
      out += fmt::format(" {}=", reg_name(report.arch, v.reg));
      switch (v.kind) {
        case RegisterVerdict::Kind::Saved: out += fmt::format("cfa{:+}", v.offset); break;
        case RegisterVerdict::Kind::Unchanged: out += "unchanged"; break;
        case RegisterVerdict::Kind::Mixed: out += "mixed"; break;
        case RegisterVerdict::Kind::Unproven:
          out += fmt::format("unproven({} at {:#x})", unproven_text(v.why), v.at);
          break;
      }
    }
    out += '\n';
  }
  out += fmt::format("{}: {} of {} register claims at call sites proven ({})\n", path,
                     report.proven, report.asked, percent(report.proven, report.asked));
  return out;
}

std::string registers_json(std::string_view path, const RegistersReport& report) {
  using nlohmann::json;
  json functions = json::array();
  for (const FunctionRegisters& fn : report.functions) {
    json calls = json::array();
    for (const CallSite& c : fn.calls) {
      json saved = json::array();
      for (const SavedReg& s : c.saved) saved.push_back({s.reg, s.rule.offset});
      calls.push_back({{"at", c.at}, {"saved", saved}, {"unchanged", c.unchanged}});
    }
    json registers = json::array();
    for (const RegisterVerdict& v : fn.registers) {
      json r = {{"reg", v.reg}, {"name", reg_name(report.arch, v.reg)}, {"kind", kind_name(v.kind)}};
      if (v.kind == RegisterVerdict::Kind::Saved) r["offset"] = v.offset;
      if (v.kind == RegisterVerdict::Kind::Unproven) {
        r["why"] = unproven_text(v.why);
        r["at"] = v.at;
      }
      registers.push_back(std::move(r));
    }
    functions.push_back({{"start", fn.start},
                         {"end", fn.end},
                         {"name", fn.name},
                         {"stop", fn.stop == StopKind::None ? "" : stop_kind_text(fn.stop)},
                         {"stopped", fn.stopped},
                         {"fragment", fn.fragment},
                         {"fragment_miss", fn.fragment_miss == FragmentMiss::None
                                               ? ""
                                               : fragment_miss_text(fn.fragment_miss)},
                         {"calls", calls},
                         {"registers", registers}});
  }
  json doc = {{"file", path},
              {"arch", arch_name(report.arch)},
              {"asked", report.asked},
              {"proven", report.proven},
              {"functions", functions}};
  return doc.dump(2) + "\n";
}

}  // namespace unwindkit::prologue
