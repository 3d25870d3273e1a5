#include "unwindkit/trace/report.h"

#include <fmt/format.h>

#include "unwindkit/file_report.h"
#include "unwindkit/json_text.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/trace/dump.h"

namespace unwindkit::trace {

std::string dump_text(const std::vector<FileTable>& files) {
  return dump_files(files, kSectionName,
                    [](const FileTable& t) { return dump_records(*t.section, t.bytes); });
}

std::string lookup_text(std::string_view file, uint64_t pc, uint64_t bias,
                        const std::optional<Location>& found) {
  if (!found) return fmt::format("{:#x}: ?? in {}\n", pc, file);
  const Location& l = *found;
  return fmt::format("{:#x}: {}+{:#x} {}:{} [{:#x}, {:#x}) in {}\n", pc,
                     l.routine.empty() ? "?" : l.routine, pc - bias - l.routine_start, l.file,
                     l.line, l.begin + bias, l.end + bias, file);
}

std::string lookup_json(std::string_view file, uint64_t pc, uint64_t bias,
                        const std::optional<Location>& found) {
  std::string out = fmt::format("{{\"pc\":\"{:#x}\",\"file\":{},\"found\":{}", pc,
                                json_string(file), found.has_value());
  if (found) {
    const Location& l = *found;
    out += fmt::format(",\"routine\":{},\"offset\":\"{:#x}\",\"source\":{},\"line\":{},"
                       "\"begin\":\"{:#x}\",\"end\":\"{:#x}\"",
                       l.routine.empty() ? "null" : json_string(l.routine),
                       pc - bias - l.routine_start, json_string(l.file), l.line, l.begin + bias,
                       l.end + bias);
  }
  return out + "}\n";
}

}  // namespace unwindkit::trace
