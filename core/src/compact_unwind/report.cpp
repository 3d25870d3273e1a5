#include "unwindkit/compact_unwind/report.h"

#include <fmt/format.h>

#include <variant>

#include "unwindkit/compact_unwind/dump.h"
#include "unwindkit/compact_unwind/encoding.h"
#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/json_text.h"

namespace unwindkit::compact_unwind {

namespace {

constexpr std::string_view kEhFrameSegment = "__TEXT", kEhFrameSection = "__eh_frame";

std::string number_or_null(const std::optional<uint32_t>& v) {
  return v ? fmt::format("{}", *v) : "null";
}

}  // namespace

Result<std::vector<const macho::Slice*>> select_slices(const macho::MachOFile& file,
                                                       std::string_view arch, bool all_slices) {
  std::vector<const macho::Slice*> out;
  if (arch.empty() && all_slices) {
    for (const auto& s : file.slices()) out.push_back(&s);
    return out;
  }
  auto s = file.select(arch);
  if (!s) return tl::unexpected(s.error());
  out.push_back(*s);
  return out;
}

DumpReport dump_report(std::string_view file_name, const std::vector<const macho::Slice*>& slices,
                       bool json, bool decoded) {
  DumpReport r;
  std::string json_slices;
  for (const auto* s : slices) {
    auto t = decode_slice(*s);
    if (!t) {
      r.problems.push_back(fmt::format("{}: {}", file_name, t.error().to_string()));
      r.complete = false;
      break;
    }
    if (t->tables.empty()) {
      r.problems.push_back(fmt::format("{}: no __unwind_info or __compact_unwind section ({})",
                                       file_name, macho::cpu_name(s->cputype())));
      continue;
    }
    if (json) {
      json_slices += (json_slices.empty() ? "" : ",") + tables_json(*t);
      continue;
    }
    // llvm-objdump prints one slice, bare; several slices need a line saying which is which.
    if (slices.size() > 1)
      r.out += fmt::format("{} (architecture {}):\n", file_name, macho::cpu_name(s->cputype()));
    r.out += dump_tables(*t, decoded);
  }
  if (json && r.complete)
    r.out = fmt::format("{{\"file\":{},\"slices\":[{}]}}\n", json_string(file_name), json_slices);
  return r;
}

Result<std::optional<Entry>> find_entry(const SliceTables& t, uint64_t pc) {
  for (const auto& table : t.tables) {
    if (const auto* info = std::get_if<UnwindInfo>(&table)) {
      auto e = lookup(*info, t.image_base, pc);
      if (!e || *e) return e;
      continue;
    }
    for (const auto& oe : std::get<std::vector<ObjectEntry>>(table))
      if (pc >= oe.function && pc - oe.function < oe.length)
        return Entry{oe.function, oe.function + oe.length, oe.encoding, {}, {}};
  }
  return std::nullopt;
}

Result<std::optional<UnwindRule>> dwarf_rule(const macho::Slice& slice, Arch arch, uint64_t pc) {
  const macho::Section* eh = slice.section(kEhFrameSegment, kEhFrameSection);
  if (eh == nullptr)
    return fail(ErrorKind::NotFound, "__eh_frame", 0, "section", "DWARF-mode entry but no __TEXT,__eh_frame section");
  auto cfi = dwarf::CfiTables::open_eh_frame(arch, eh->data, eh->addr);
  if (!cfi) return tl::unexpected(cfi.error());
  auto rule = cfi->lookup(pc);
  if (rule && *rule) (*rule)->source = Source::Cfi;
  return rule;
}

Result<std::optional<LookupReport>> lookup_report(const macho::Slice& slice, uint64_t pc) {
  auto t = decode_slice(slice);
  if (!t) return tl::unexpected(t.error());
  auto found = find_entry(*t, pc);
  if (!found) return tl::unexpected(found.error());
  if (!*found) return std::nullopt;
  LookupReport r;
  r.pc = pc;
  r.entry = **found;
  const Entry& e = r.entry;
  auto decoded = decode_encoding(t->arch, e.encoding);
  r.mode = mode_name(t->arch, decoded ? decoded->mode : 0);
  r.encoding = decoded ? describe_encoding(*decoded) : "invalid: " + decoded.error().message;
  const Bytes code = slice.bytes_at_address(e.function_start, e.function_end - e.function_start);
  auto lowered = lower(t->arch, e, code);
  if (!lowered) {
    r.kind = "error";
    r.rule_text = lowered.error().to_string();
    r.ok = false;
    return r;
  }
  switch (lowered->kind) {
    case Lowered::Kind::Rule:
      r.kind = "rule";
      r.rule = lowered->rule;
      r.rule_text = describe(lowered->rule);
      break;
    case Lowered::Kind::UseDwarf: {
      r.kind = "dwarf";
      r.dwarf_offset_hint = lowered->dwarf_offset;
      auto rule = dwarf_rule(slice, t->arch, pc);
      if (!rule) {
        r.rule_text = rule.error().to_string();
        r.ok = false;
      } else if (!*rule) {
        r.rule_text = fmt::format("no __eh_frame FDE covers {:#x}", pc);
        r.ok = false;
      } else {
        r.rule = **rule;
        r.rule_text = describe(**rule);
      }
      break;
    }
    case Lowered::Kind::NoInfo:
      r.kind = "none";
      r.rule_text = "no information here (encoding 0): fall back to another source";
      break;
  }
  return r;
}

std::string lookup_text(const LookupReport& r) {
  std::string out = fmt::format("function: {:#x}-{:#x}\n", r.entry.function_start,
                                r.entry.function_end);
  out += fmt::format("encoding: 0x{:08x} {}\n", r.entry.encoding, r.encoding);
  if (r.entry.personality) out += fmt::format("personality: {:#x}\n", *r.entry.personality);
  if (r.entry.lsda) out += fmt::format("lsda: {:#x}\n", *r.entry.lsda);
  if (r.dwarf_offset_hint)
    out += fmt::format("eh_frame: FDE found by pc (encoding's offset hint {:#x})\n",
                       *r.dwarf_offset_hint);
  out += fmt::format("{}: {}\n", r.ok ? r.kind : "error", r.rule_text);
  if (r.rule && r.rule->ra_mangled) out += "return address: PAC-signed\n";
  return out;
}

std::string lookup_json(const LookupReport& r) {
  return fmt::format(
      "{{\"pc\":{},\"function_start\":{},\"function_end\":{},\"encoding\":{},\"mode\":{},"
      "\"result\":{},\"rule\":{},\"dwarf_offset_hint\":{},\"personality\":{},\"lsda\":{},"
      "\"ra_mangled\":{}}}\n",
      r.pc, r.entry.function_start, r.entry.function_end, r.entry.encoding, json_string(r.mode),
      json_string(r.ok ? r.kind : "error"), json_string(r.rule_text),
      number_or_null(r.dwarf_offset_hint), number_or_null(r.entry.personality),
      number_or_null(r.entry.lsda), r.rule && r.rule->ra_mangled);
}

}  // namespace unwindkit::compact_unwind
