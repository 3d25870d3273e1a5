#include "unwindkit/file_report.h"

#include <fmt/format.h>

namespace unwindkit {

namespace {

std::string no_section_problem(std::string_view section) {
  return fmt::format("no {} section", section);
}

}  // namespace

std::string join_file_texts(const std::vector<FileText>& parts) {
  std::string out;
  stream_file_texts(parts, [&](std::string_view piece) { out += piece; },
                    [&](const FileText& p) { out += p.text; });
  return out;
}

std::string table_problem(std::string_view problem, std::string_view section) {
  return problem.empty() ? no_section_problem(section) : std::string(problem);
}

std::string no_table_text(std::string_view file, std::string_view problem,
                          std::string_view section) {
  return fmt::format("{}: {}\n", file, table_problem(problem, section));
}

std::string no_module_text(uint64_t pc) { return fmt::format("{:#x}: in no module\n", pc); }

std::string no_section_text(uint64_t pc, std::string_view file, std::string_view section) {
  return fmt::format("{:#x}: {}: {}\n", pc, file, no_section_problem(section));
}

std::string table_error_text(uint64_t pc, std::string_view file, const Error& error) {
  return fmt::format("{:#x}: {}: {}\n", pc, file, error.to_string());
}

}  // namespace unwindkit
