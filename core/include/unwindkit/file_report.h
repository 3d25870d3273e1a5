// The frame every multi-file report shares: the debuggers' commands cover every module that
// has a table, the CLI one file. One file prints bare (readelf's text for SFrame); several
// print each under a "FILE:" line, a blank line after each.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "unwindkit/error.h"

namespace unwindkit {

struct FileText {
  std::string file;
  std::string text;  // ends in "\n"
};

// Where a report is written, in consecutive pieces (each at most tens of kilobytes).
using Sink = std::function<void(std::string_view)>;

// The frame, streamed: `write(f)` sends each file's text (ending in "\n") to `sink`, and the
// frame goes around it. `File` is anything with a `file` name.
template <class File, class Write>
void stream_file_texts(const std::vector<File>& files, const Sink& sink, Write write) {
  const bool titled = files.size() != 1;
  for (const File& f : files) {
    if (titled) sink(f.file + ":\n");
    write(f);
    if (titled) sink("\n");
  }
}

std::string join_file_texts(const std::vector<FileText>& parts);

// What is wrong with a file's table: `problem`, or with none given "no SECTION section".
std::string table_problem(std::string_view problem, std::string_view section);
// A file's text in a dump where it has no table: "FILE: " and table_problem's line.
std::string no_table_text(std::string_view file, std::string_view problem,
                          std::string_view section);

// The dump of `files` (each a format's FileTable: `file`, `section` or null, `problem`):
// `dump(table)` for a decoded one, "FILE: problem" for one without, joined as above.
template <class Table, class Dump>
std::string dump_files(const std::vector<Table>& files, std::string_view section, Dump dump) {
  std::vector<FileText> parts;
  for (const Table& t : files) {
    if (t.section == nullptr)
      parts.push_back({t.file, no_table_text(t.file, t.problem, section)});
    else
      parts.push_back({t.file, dump(t)});
  }
  return join_file_texts(parts);
}

// "PC: in no module": a debugger lookup of an address outside every loaded file.
std::string no_module_text(uint64_t pc);
// "PC: FILE: no SECTION section": a lookup in a file without the table.
std::string no_section_text(uint64_t pc, std::string_view file, std::string_view section);
// "PC: FILE: ERROR": a lookup in a file whose table cannot be read.
std::string table_error_text(uint64_t pc, std::string_view file, const Error& error);

}  // namespace unwindkit
