// `.trace` tables for the GDB plugin (see trace_table.h).
#include "trace_table.h"

#include "unwindkit/elf/elf_file.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/elf_section.h"
#include "unwindkit/file_report.h"
#include "unwindkit/trace/lookup.h"
#include "unwindkit/trace/report.h"

namespace py = pybind11;

namespace unwindkit::gdb {

std::shared_ptr<TraceTable> TraceTable::load(const std::string& path) {
  auto table = std::make_shared<TraceTable>();
  table->path_ = path;
  // Mapped, not read: GDB asks every file it loads whether it has `.trace` (the frame
  // filter), and most have none; only the headers' pages and `.trace`'s are read, and those
  // are copied before this function returns, so the mapping lives no longer than this call.
  auto file = elf::ElfFile::map(path);
  if (!file) {
    table->error_ = file.error();
    return table;
  }
  const elf::Section* s = file->section(trace::kSectionName);
  if (s == nullptr) return table;
  table->has_trace_ = true;
  auto bytes = trace::section_bytes(*file, *s);
  if (!bytes) {
    table->error_ = bytes.error();
    return table;
  }
  // Copied: the ElfFile (which owns the image) does not outlive this function.
  table->bytes_.assign(bytes->begin(), bytes->end());
  auto decoded = trace::decode(table->bytes_, file->is_64() ? 8 : 4);
  if (!decoded) {
    table->error_ = decoded.error();
    return table;
  }
  table->section_ = std::move(*decoded);
  return table;
}

py::object TraceTable::lookup(uint64_t pc) const {
  if (!section_) return py::none();
  auto loc = trace::lookup(*section_, pc);
  if (!loc) return py::none();
  return py::make_tuple(loc->routine, loc->file, loc->line, loc->routine_start, loc->begin,
                        loc->end);
}

std::string TraceTable::dump() const {
  trace::FileTable table{path_, section_ ? &*section_ : nullptr, bytes_, {}};
  if (error_) table.problem = error_->to_string();
  return trace::dump_text({table});
}

std::pair<std::string, bool> TraceTable::lookup_text(uint64_t pc, uint64_t bias) const {
  if (error_) return {table_error_text(pc, path_, *error_), false};
  if (!section_) return {no_section_text(pc, path_, trace::kSectionName), false};
  const auto loc = trace::lookup(*section_, pc - bias);
  return {trace::lookup_text(path_, pc, bias, loc), loc.has_value()};
}

void bind_trace(py::module_& m) {
  py::class_<TraceTable, std::shared_ptr<TraceTable>>(m, "TraceTable")
      .def_property_readonly("path", &TraceTable::path)
      .def_property_readonly("has_trace", &TraceTable::has_trace)
      .def("lookup", &TraceTable::lookup, py::arg("pc"),
           "(routine, file, line, routine start, row begin, row end) at a link-time pc, or "
           "None.")
      .def("dump", &TraceTable::dump)
      .def("lookup_text", &TraceTable::lookup_text, py::arg("pc"), py::arg("bias"),
           "`unwindkit trace lookup`'s (text, found) at a run-time pc.");
  m.def("load_trace", &TraceTable::load, py::arg("path"),
        "A file's .trace section, read from disk; never raises (dump and lookup_text say "
        "what is wrong with a bad one).");
}

}  // namespace unwindkit::gdb
