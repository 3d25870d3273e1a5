#include "unwindkit/file_report.h"

#include <fmt/format.h>

namespace unwindkit {

namespace {

std::string no_section_problem(std::string_view section) {
  return fmt::format("no {} section", section);
}

}  // namespace

std::string join_file_texts(const std::vector<FileText>& parts) {
  if (parts.size() == 1) return parts[0].text;
  std::string out;
  for (const FileText& p : parts) out += p.file + ":\n" + p.text + "\n";
  return out;
}

std::string table_problem(std::string_view problem, std::string_view section) {
  return problem.empty() ? no_section_problem(section) : std::string(problem);
}

std::string no_module_text(uint64_t pc) { return fmt::format("{:#x}: in no module\n", pc); }

std::string no_section_text(uint64_t pc, std::string_view file, std::string_view section) {
  return fmt::format("{:#x}: {}: {}\n", pc, file, no_section_problem(section));
}

std::string table_error_text(uint64_t pc, std::string_view file, const Error& error) {
  return fmt::format("{:#x}: {}: {}\n", pc, file, error.to_string());
}

}  // namespace unwindkit
