// The frame every multi-file report shares: the debuggers' commands cover every module that
// has a table, the CLI one file. One file prints bare (readelf's text for SFrame); several
// print each under a "FILE:" line, a blank line after each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/error.h"

namespace unwindkit {

struct FileText {
  std::string file;
  std::string text;  // ends in "\n"
};

std::string join_file_texts(const std::vector<FileText>& parts);

// "PC: in no module": a debugger lookup of an address outside every loaded file.
std::string no_module_text(uint64_t pc);
// "PC: FILE: no SECTION section": a lookup in a file without the table.
std::string no_section_text(uint64_t pc, std::string_view file, std::string_view section);
// "PC: FILE: ERROR": a lookup in a file whose table cannot be read.
std::string table_error_text(uint64_t pc, std::string_view file, const Error& error);
// "no SECTION section", the problem of a file a dump or check finds without the table.
std::string no_section_problem(std::string_view section);

}  // namespace unwindkit
