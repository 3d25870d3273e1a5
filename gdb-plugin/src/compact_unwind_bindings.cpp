// Compact unwind for the GDB plugin (see compact_unwind_bindings.h). Every function reads the
// file afresh and never raises: problems come back as text for a gdb.GdbError.
#include "compact_unwind_bindings.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "unwindkit/compact_unwind/report.h"
#include "unwindkit/macho/macho_file.h"

namespace py = pybind11;

namespace unwindkit::gdb {

namespace {

namespace cu = compact_unwind;

// (stdout text, [problems]) as `unwindkit compact-unwind dump` prints them.
py::tuple dump(const std::string& path, const std::string& arch, bool json, bool decoded) {
  auto file = macho::MachOFile::open(path);
  if (!file) return py::make_tuple("", std::vector<std::string>{path + ": " + file.error().to_string()});
  auto slices = cu::select_slices(*file, arch, true);
  if (!slices) return py::make_tuple("", std::vector<std::string>{path + ": " + slices.error().message});
  auto report = cu::dump_report(path, *slices, json, decoded);
  return py::make_tuple(report.complete || !json ? report.out : std::string(), report.problems);
}

// (text, error): the CLI's lookup text at file address `pc`, or what went wrong.
py::tuple lookup(const std::string& path, const std::string& arch, uint64_t pc, bool json) {
  auto fail = [&](const std::string& why) { return py::make_tuple(py::none(), path + ": " + why); };
  auto file = macho::MachOFile::open(path);
  if (!file) return fail(file.error().to_string());
  auto slices = cu::select_slices(*file, arch, false);
  if (!slices) return fail(slices.error().message);
  auto report = cu::lookup_report(*slices->front(), pc);
  if (!report) return fail(report.error().to_string());
  if (!*report) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(pc));
    return fail(std::string("no compact unwind entry covers ") + buf);
  }
  const std::string text = json ? cu::lookup_json(**report) : cu::lookup_text(**report);
  return py::make_tuple(text, (*report)->ok ? py::object(py::none()) : py::str("lookup failed"));
}

// [(segment, section, address, size)] of the slice, or a string saying why not.
py::object sections(const std::string& path, const std::string& arch) {
  auto file = macho::MachOFile::open(path);
  if (!file) return py::str(file.error().to_string());
  auto s = file->select(arch);
  if (!s) return py::str(s.error().message);
  py::list out;
  for (const auto& sect : (*s)->sections())
    out.append(py::make_tuple(sect.segname, sect.sectname, sect.addr, sect.size));
  return out;
}

}  // namespace

void add_compact_unwind_bindings(py::module_& m) {
  m.def("compact_unwind_dump", &dump, py::arg("path"), py::arg("arch"), py::arg("json"),
        py::arg("decoded"),
        "(text, [problems]) exactly as `unwindkit compact-unwind dump` prints them.");
  m.def("compact_unwind_lookup", &lookup, py::arg("path"), py::arg("arch"), py::arg("pc"),
        py::arg("json"),
        "(text or None, error or None): `unwindkit compact-unwind lookup` at a file address.");
  m.def("macho_sections", &sections, py::arg("path"), py::arg("arch"),
        "[(segment, section, address, size)] of a Mach-O slice, or the error as a string.");
  m.def("is_macho",
        [](const std::string& path) {
          std::vector<uint8_t> head(4);
          FILE* f = std::fopen(path.c_str(), "rb");
          if (!f) return false;
          const size_t n = std::fread(head.data(), 1, head.size(), f);
          std::fclose(f);
          return n == head.size() && macho::MachOFile::is_macho(head);
        },
        py::arg("path"), "True when the file starts with a thin or fat Mach-O magic.");
}

}  // namespace unwindkit::gdb
