#include "unwindkit/unwind/bt_report.h"

#include <fmt/format.h>

#include <filesystem>
#include <iterator>

#include "unwindkit/json_text.h"

namespace unwindkit::unwind {
namespace {

std::string hex_json(uint64_t v) { return json_string(fmt::format("{:#x}", v)); }

void append_frame_json(std::string& out, const Frame& f, const std::optional<SymbolHit>& name) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{{\"index\": {}, \"pc\": {}, \"cfa\": {}, ", f.index, hex_json(f.pc()),
                 f.cfa ? hex_json(*f.cfa) : "null");
  if (f.module)
    fmt::format_to(it, "\"module\": {}, \"module_offset\": {}, ", json_string(f.module->path()),
                   hex_json(f.module_offset));
  else
    out += "\"module\": null, \"module_offset\": null, ";
  if (name)
    fmt::format_to(it, "\"symbol\": {}, \"symbol_offset\": {}, ", json_string(name->name),
                   name->offset);
  else
    out += "\"symbol\": null, \"symbol_offset\": null, ";
  fmt::format_to(it, "\"source\": {}, \"source_errors\": [",
                 f.source ? json_string(source_name(*f.source)) : "null");
  for (size_t i = 0; i < f.passed_over.size(); ++i)
    fmt::format_to(it, "{}{}", i ? ", " : "", json_string(f.passed_over[i].message()));
  out += "], \"registers\": {";
  std::string unavailable;
  bool first = true;
  for (uint16_t r : shown_registers(f.regs.arch())) {
    const std::string key = json_string(reg_name(f.regs.arch(), r));
    if (auto v = f.regs.get(r)) {
      fmt::format_to(it, "{}{}: {{\"value\": {}, \"from\": {}}}", first ? "" : ", ", key,
                     hex_json(*v), json_string(register_origin(f, r)));
      first = false;
    } else {
      unavailable += (unavailable.empty() ? "" : ", ") + key;
    }
  }
  out += "}, \"unavailable\": [" + unavailable + "]}";
}

}  // namespace

std::string bt_frame_line(const Frame& f, const std::optional<SymbolHit>& name) {
  std::string where = "??";
  if (f.module)
    where = fmt::format("{}+{:#x}", std::filesystem::path(f.module->path()).filename().string(),
                        f.module_offset);
  std::string sym = name ? fmt::format("{}+{:#x}", name->name, name->offset) : "??";
  return fmt::format("#{:<3} {:#018x}  {}  {}  [{}]{}", f.index, f.pc(), where, sym,
                     f.source ? source_name(*f.source) : "-", f.signal_frame ? " <signal>" : "");
}

std::string_view register_origin(const Frame& f, uint16_t reg) {
  if (!f.regs.known(reg)) return "unavailable";
  switch (f.regs.origin(reg)) {
    case RegOrigin::Thread: return "thread";
    case RegOrigin::Carried: return "carried";
    case RegOrigin::Code: return "sframe+code";
    case RegOrigin::Table: break;
  }
  const std::optional<Source> by = f.regs.stepped_by();
  return by ? source_name(*by) : "thread";
}

std::vector<uint16_t> shown_registers(Arch arch) {
  std::vector<uint16_t> regs{arch_info(arch).sp};
  for (uint16_t r : callee_saved_registers(arch))
    if (r != regs.front()) regs.push_back(r);
  return regs;
}

std::string bt_registers_line(const Frame& f) {
  std::string out = "     ";
  for (uint16_t r : shown_registers(f.regs.arch())) {
    const std::string name = reg_name(f.regs.arch(), r);
    if (auto v = f.regs.get(r))
      out += fmt::format(" {}={:#x} [{}]", name, *v, register_origin(f, r));
    else
      out += fmt::format(" {} unavailable", name);
  }
  return out;
}

std::string bt_stop_line(const Walk& walk) { return "stopped: " + walk.stop_reason; }

std::string bt_text(const Walk& walk, const std::vector<std::optional<SymbolHit>>& names,
                    bool registers) {
  std::string out;
  for (size_t i = 0; i < walk.frames.size(); ++i) {
    out += bt_frame_line(walk.frames[i], i < names.size() ? names[i] : std::nullopt) + "\n";
    if (registers) out += bt_registers_line(walk.frames[i]) + "\n";
  }
  return out + bt_stop_line(walk) + "\n";
}

std::string bt_json(const std::vector<ThreadBacktrace>& threads,
                    const std::vector<std::string>& warnings) {
  std::string out = "{\"threads\": [";
  auto it = std::back_inserter(out);
  for (size_t t = 0; t < threads.size(); ++t) {
    const ThreadBacktrace& tb = threads[t];
    fmt::format_to(it, "{}{{\"tid\": {}, \"signal\": {}, \"frames\": [", t ? ", " : "", tb.tid,
                   tb.signal);
    for (size_t i = 0; i < tb.walk->frames.size(); ++i) {
      if (i) out += ", ";
      append_frame_json(out, tb.walk->frames[i], i < tb.names.size() ? tb.names[i] : std::nullopt);
    }
    fmt::format_to(it, "], \"stop_reason\": {}}}", json_string(tb.walk->stop_reason));
  }
  out += "], \"warnings\": [";
  for (size_t i = 0; i < warnings.size(); ++i)
    fmt::format_to(it, "{}{}", i ? ", " : "", json_string(warnings[i]));
  return out + "]}\n";
}

}  // namespace unwindkit::unwind
