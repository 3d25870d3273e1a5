#include "unwindkit/compact_unwind/tables.h"

#include <fmt/format.h>

#include "unwindkit/json_text.h"

#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/compact_unwind/dump.h"

namespace unwindkit::compact_unwind {

Result<SliceTables> decode_slice(const macho::Slice& slice) {
  SliceTables t;
  const auto arch = slice.arch();
  if (!arch)
    return fail("Mach-O", 4, "cputype",
                fmt::format("no compact unwind for {}", macho::cpu_name(slice.cputype())));
  t.arch = *arch;
  t.image_base = slice.image_base();
  for (const auto& s : slice.sections()) {
    if (s.sectname == kUnwindInfoSection) {
      auto info = decode_unwind_info(s.data);
      if (!info) return tl::unexpected(info.error());
      t.tables.emplace_back(std::move(*info));
    } else if (s.sectname == kCompactUnwindSection) {
      auto entries = decode_object_section(slice, s);
      if (!entries) return tl::unexpected(entries.error());
      t.tables.emplace_back(std::move(*entries));
    }
  }
  return t;
}

namespace {

std::string decoded_objects(const std::vector<ObjectEntry>& entries, Arch arch) {
  std::string out = "Decoded entries:\n";
  for (const auto& e : entries) {
    auto d = decode_encoding(arch, e.encoding);
    out += fmt::format("  0x{:x}-0x{:x} 0x{:08x} {}\n", e.function, e.function + e.length,
                       e.encoding, d ? describe_encoding(*d) : "invalid: " + d.error().message);
  }
  return out;
}

std::string json_decoded(Arch arch, uint32_t encoding) {
  auto d = decode_encoding(arch, encoding);
  if (!d) return fmt::format("{{\"error\":{}}}", json_string(d.error().message));
  static constexpr const char* kKinds[] = {"none", "frame", "frameless", "frameless_indirect",
                                           "dwarf"};
  std::string saved;
  for (const auto& s : d->saved)
    saved += fmt::format("{}{{\"reg\":{},\"cfa_offset\":{}}}", saved.empty() ? "" : ",",
                         json_string(reg_name(arch, s.reg)), s.cfa_offset);
  return fmt::format(
      "{{\"mode\":{},\"kind\":\"{}\",\"personality_index\":{},\"has_lsda\":{},"
      "\"is_not_function_start\":{},\"saved\":[{}],\"stack_size\":{},"
      "\"stack_immediate_offset\":{},\"stack_adjust\":{},\"dwarf_offset\":{},\"ra_mangled\":{}}}",
      json_string(mode_name(arch, d->mode)), kKinds[static_cast<int>(d->kind)],
      d->personality_index, d->has_lsda, d->is_not_function_start, saved, d->stack_size,
      d->stack_immediate_offset, d->stack_adjust, d->dwarf_offset, d->ra_mangled);
}

template <class T, class F>
std::string json_array(const std::vector<T>& v, F f) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + f(v[i]);
  return out + "]";
}

std::string unwind_info_json(const UnwindInfo& info, Arch arch, uint64_t base) {
  const Header& h = info.header;
  auto num = [](uint32_t v) { return fmt::format("{}", v); };
  std::string pages = json_array(info.pages, [&](const Page& p) {
    return fmt::format(
        "{{\"index\":{},\"section_offset\":{},\"base_function_offset\":{},\"kind\":\"{}\","
        "\"encodings\":{},\"entries\":{}}}",
        p.index, p.section_offset, p.base_function_offset,
        p.kind == kPageKindCompressed ? "compressed" : "regular", json_array(p.encodings, num),
        json_array(p.entries, [&](const PageEntry& e) {
          return fmt::format(
              "{{\"function_offset\":{},\"address\":{},\"encoding\":{},{}\"decoded\":{}}}",
              e.function_offset, base + e.function_offset, e.encoding,
              p.kind == kPageKindCompressed
                  ? fmt::format("\"encoding_index\":{},", e.encoding_index)
                  : std::string(),
              json_decoded(arch, e.encoding));
        }));
  });
  return fmt::format(
      "{{\"section\":\"__unwind_info\",\"header\":{{\"version\":{},\"common_encodings_offset\":{},"
      "\"common_encodings_count\":{},\"personalities_offset\":{},\"personalities_count\":{},"
      "\"index_offset\":{},\"index_count\":{}}},\"common_encodings\":{},\"personalities\":{},"
      "\"index\":{},\"lsdas\":{},\"pages\":{}}}",
      h.version, h.common_encodings_offset, h.common_encodings_count, h.personalities_offset,
      h.personalities_count, h.index_offset, h.index_count,
      json_array(info.common_encodings, num), json_array(info.personalities, num),
      json_array(info.index,
                 [](const IndexEntry& e) {
                   return fmt::format(
                       "{{\"function_offset\":{},\"page_offset\":{},\"lsda_offset\":{}}}",
                       e.function_offset, e.page_offset, e.lsda_offset);
                 }),
      json_array(info.lsdas,
                 [](const LsdaEntry& e) {
                   return fmt::format("{{\"function_offset\":{},\"lsda_offset\":{}}}",
                                      e.function_offset, e.lsda_offset);
                 }),
      pages);
}

std::string target_json(const std::optional<RelocTarget>& t) {
  if (!t) return "null";
  return fmt::format("{{\"name\":{},\"addend\":{}}}", json_string(t->name), t->addend);
}

std::string objects_json(const std::vector<ObjectEntry>& entries, Arch arch) {
  return fmt::format(
      "{{\"section\":\"__compact_unwind\",\"entries\":{}}}",
      json_array(entries, [&](const ObjectEntry& e) {
        return fmt::format(
            "{{\"offset\":{},\"start\":{},\"start_target\":{},\"length\":{},\"encoding\":{},"
            "\"personality\":{},\"personality_target\":{},\"lsda\":{},\"lsda_target\":{},"
            "\"decoded\":{}}}",
            e.offset, e.function, target_json(e.function_target), e.length, e.encoding,
            e.personality, target_json(e.personality_target), e.lsda, target_json(e.lsda_target),
            json_decoded(arch, e.encoding));
      }));
}

}  // namespace

std::string dump_tables(const SliceTables& t, bool decoded) {
  std::string out;
  for (const auto& table : t.tables) {
    if (const auto* info = std::get_if<UnwindInfo>(&table)) {
      out += dump_unwind_info(*info);
      if (decoded) out += dump_decoded(*info, t.arch, t.image_base);
    } else {
      const auto& entries = std::get<std::vector<ObjectEntry>>(table);
      out += dump_object_section(entries);
      if (decoded) out += decoded_objects(entries, t.arch);
    }
  }
  return out;
}

std::string tables_json(const SliceTables& t) {
  std::string tables;
  for (const auto& table : t.tables) {
    if (!tables.empty()) tables += ",";
    if (const auto* info = std::get_if<UnwindInfo>(&table))
      tables += unwind_info_json(*info, t.arch, t.image_base);
    else
      tables += objects_json(std::get<std::vector<ObjectEntry>>(table), t.arch);
  }
  return fmt::format("{{\"arch\":\"{}\",\"image_base\":{},\"tables\":[{}]}}", arch_name(t.arch),
                     t.image_base, tables);
}

}  // namespace unwindkit::compact_unwind
