#include "unwindkit/compact_unwind/tables.h"

#include <fmt/format.h>

#include <iterator>
#include <string_view>
#include <utility>

#include "unwindkit/json_text.h"

#include "unwindkit/compact_unwind/constants.h"
#include "unwindkit/macho/constants.h"
#include "unwindkit/compact_unwind/dump.h"

namespace unwindkit::compact_unwind {

Result<SliceTables> decode_slice(const macho::Slice& slice) {
  SliceTables t;
  const auto arch = slice.arch();
  if (!arch)
    return fail(ErrorKind::Unsupported, "Mach-O", macho::kOffCpuType, "cputype",
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
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "Decoded entries:\n");
  for (const auto& e : entries) {
    auto d = decode_encoding(arch, e.encoding);
    fmt::format_to(o, "  0x{:x}-0x{:x} 0x{:08x} {}\n", e.function, e.function + e.length,
                   e.encoding, d ? describe_encoding(*d) : "invalid: " + d.error().message);
  }
  return out;
}

// The JSON is appended to one string through fmt::format_to: a table can hold thousands of
// entries, and building each as its own string and concatenating them made the allocator, not
// the formatting, the cost of a dump (and most of fuzz_macho's time under ASan).
using Out = std::string;

template <class... Args>
void put(Out& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

void append(Out& out, std::string_view text) { out += text; }

template <class T, class F>
void json_array(Out& out, const std::vector<T>& v, F f) {
  out.push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out.push_back(',');
    f(v[i]);
  }
  out.push_back(']');
}

void json_numbers(Out& out, const std::vector<uint32_t>& v) {
  json_array(out, v, [&](uint32_t n) { put(out, "{}", n); });
}

void json_decoded(Out& out, Arch arch, uint32_t encoding) {
  auto d = decode_encoding(arch, encoding);
  if (!d) {
    put(out, "{{\"error\":{}}}", json_string(d.error().message));
    return;
  }
  static constexpr const char* kKinds[] = {"none", "frame", "frameless", "frameless_indirect",
                                           "dwarf"};
  put(out, "{{\"mode\":{},\"kind\":\"{}\",\"personality_index\":{},\"has_lsda\":{},"
      "\"is_not_function_start\":{},\"saved\":",
      json_string(mode_name(arch, d->mode)), kKinds[static_cast<int>(d->kind)],
      d->personality_index, d->has_lsda, d->is_not_function_start);
  json_array(out, d->saved, [&](const SavedSlot& s) {
    put(out, "{{\"reg\":{},\"cfa_offset\":{}}}", json_string(reg_name(arch, s.reg)),
        s.cfa_offset);
  });
  put(out, ",\"stack_size\":{},\"stack_immediate_offset\":{},\"stack_adjust\":{},"
      "\"dwarf_offset\":{},\"ra_mangled\":{}}}",
      d->stack_size, d->stack_immediate_offset, d->stack_adjust, d->dwarf_offset, d->ra_mangled);
}

void unwind_info_json(Out& out, const UnwindInfo& info, Arch arch, uint64_t base) {
  const Header& h = info.header;
  put(out,
      "{{\"section\":\"__unwind_info\",\"header\":{{\"version\":{},\"common_encodings_offset\":{},"
      "\"common_encodings_count\":{},\"personalities_offset\":{},\"personalities_count\":{},"
      "\"index_offset\":{},\"index_count\":{}}},\"common_encodings\":",
      h.version, h.common_encodings_offset, h.common_encodings_count, h.personalities_offset,
      h.personalities_count, h.index_offset, h.index_count);
  json_numbers(out, info.common_encodings);
  append(out, ",\"personalities\":");
  json_numbers(out, info.personalities);
  append(out, ",\"index\":");
  json_array(out, info.index, [&](const IndexEntry& e) {
    put(out, "{{\"function_offset\":{},\"page_offset\":{},\"lsda_offset\":{}}}",
        e.function_offset, e.page_offset, e.lsda_offset);
  });
  append(out, ",\"lsdas\":");
  json_array(out, info.lsdas, [&](const LsdaEntry& e) {
    put(out, "{{\"function_offset\":{},\"lsda_offset\":{}}}", e.function_offset,
        e.lsda_offset);
  });
  append(out, ",\"pages\":");
  json_array(out, info.pages, [&](const Page& p) {
    const bool compressed = p.kind == kPageKindCompressed;
    put(out,
        "{{\"index\":{},\"section_offset\":{},\"base_function_offset\":{},\"kind\":\"{}\","
        "\"encodings\":",
        p.index, p.section_offset, p.base_function_offset, compressed ? "compressed" : "regular");
    json_numbers(out, p.encodings);
    append(out, ",\"entries\":");
    json_array(out, p.entries, [&](const PageEntry& e) {
      put(out, "{{\"function_offset\":{},\"address\":{},\"encoding\":{},", e.function_offset,
          base + e.function_offset, e.encoding);
      if (compressed) put(out, "\"encoding_index\":{},", e.encoding_index);
      append(out, "\"decoded\":");
      json_decoded(out, arch, e.encoding);
      out.push_back('}');
    });
    out.push_back('}');
  });
  out.push_back('}');
}

void target_json(Out& out, const std::optional<RelocTarget>& t) {
  if (!t) {
    append(out, "null");
    return;
  }
  put(out, "{{\"name\":{},\"addend\":{}}}", json_string(t->name), t->addend);
}

void objects_json(Out& out, const std::vector<ObjectEntry>& entries, Arch arch) {
  append(out, "{\"section\":\"__compact_unwind\",\"entries\":");
  json_array(out, entries, [&](const ObjectEntry& e) {
    put(out, "{{\"offset\":{},\"start\":{},\"start_target\":", e.offset, e.function);
    target_json(out, e.function_target);
    put(out, ",\"length\":{},\"encoding\":{},\"personality\":{},\"personality_target\":",
        e.length, e.encoding, e.personality);
    target_json(out, e.personality_target);
    put(out, ",\"lsda\":{},\"lsda_target\":", e.lsda);
    target_json(out, e.lsda_target);
    append(out, ",\"decoded\":");
    json_decoded(out, arch, e.encoding);
    out.push_back('}');
  });
  out.push_back('}');
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
  Out out;
  put(out, "{{\"arch\":\"{}\",\"image_base\":{},\"tables\":", arch_name(t.arch), t.image_base);
  json_array(out, t.tables, [&](const auto& table) {
    if (const auto* info = std::get_if<UnwindInfo>(&table))
      unwind_info_json(out, *info, t.arch, t.image_base);
    else
      objects_json(out, std::get<std::vector<ObjectEntry>>(table), t.arch);
  });
  out.push_back('}');
  return out;
}

}  // namespace unwindkit::compact_unwind
