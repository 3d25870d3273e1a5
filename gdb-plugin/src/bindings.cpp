// The `_unwindkit` extension: the core's table loading, lookup, stepping, dump and check,
// shaped for the Python side of the GDB plugin. Every entry point returns values or None;
// table and memory problems come back as strings, never as exceptions into GDB.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "cbf_bindings.h"
#include "compact_unwind_bindings.h"
#include "frame_engine.h"
#include "gdb_registers.h"
#include "pending_frame.h"
#include "prepared_modules.h"
#include "python_memory.h"
#include "side_file_bindings.h"
#include "trace_table.h"
#include "unwindkit/elf/constants.h"
#include "unwindkit/file_report.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/report.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"
#include "unwindkit/unwind/bt_report.h"
#include "unwindkit/unwind/modules.h"
#include "unwindkit/unwind/walker.h"
#include "unwindkit/version.h"

namespace py = pybind11;

namespace unwindkit::gdb {

namespace {

using unwind::Module;

// Why the module gives no rules: its file cannot be read, or its SFrame cannot be decoded or
// fails the strict checks (the first problem, with its byte offset).
std::optional<std::string> error_text(Module& m) {
  if (auto f = m.elf(); !f) return f.error().to_string();
  if (auto s = m.sframe(); !s) return s.error().to_string();
  return std::nullopt;
}

// A file GDB has loaded, at run-time address = link-time address + `bias`; `debug_files` are
// GDB's separate debug objfiles for it, whose CFI counts as the file's own.
std::shared_ptr<Module> load_module(const std::string& path, uint64_t bias,
                                    const std::vector<std::string>& debug_files) {
  std::vector<unwind::Mapping> mappings;
  if (auto file = elf::ElfFile::map(path)) {
    for (const elf::Segment& seg : file->segments())
      if (seg.type == elf::kSegmentLoad)
        mappings.push_back({seg.vaddr + bias, seg.vaddr + seg.memsz + bias, seg.offset});
  }
  auto module = take_prepared(path);
  if (module)
    module->set_mappings(std::move(mappings));
  else
    module = std::make_shared<Module>(path, path, std::move(mappings));
  module->set_bias(bias);
  for (const auto& d : debug_files) module->add_debug_file(d);
  return module;
}

using FrameValues = std::vector<std::optional<uint64_t>>;

// values = [pc, then unwind_input_registers(arch) in order]; None for a register GDB has no
// value for (AArch64 x30 in a caller frame).
RegisterSet registers_from(Arch arch, const FrameValues& values) {
  RegisterSet regs(arch);
  auto inputs = unwind_input_registers(arch);
  if (values.size() != inputs.size() + 1 || !values[0]) return regs;
  regs.set_pc(*values[0]);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (values[i + 1]) regs.set(inputs[i], *values[i + 1]);
  return regs;
}

// The link-time addresses the Python side needs to work out a load bias.
py::dict link_addresses(const std::string& path) {
  py::dict out;
  auto file = elf::ElfFile::map(path);
  if (!file) return out;
  out["entry"] = file->entry();
  out["type"] = file->type();
  if (const elf::Section* text = file->section(".text")) out[".text"] = text->addr;
  // The page the first PT_LOAD starts on: where the dynamic linker maps the file's first byte
  // (p_vaddr - p_offset is page-aligned in every linked image).
  for (const elf::Segment& segment : file->segments())
    if (segment.type == elf::kSegmentLoad) {
      out["first_load"] = segment.vaddr - segment.offset;
      break;
    }
  return out;
}

// A module's section as the sframe reports read it, straight from its bytes.
sframe::FileSection file_section(Module& mod) {
  const auto bytes = mod.sframe_section();
  if (!bytes) return {mod.path(), std::nullopt, 0, sframe::Format::SFrame, {}};
  return {mod.path(), bytes->bytes, bytes->address, bytes->format, {}};
}

// `unwindkit sframe dump`: readelf --sframe's text, at the link-time address as readelf shows
// it, handed to `write` (gdb.write) piece by piece as it is made. Made whole first, a
// 1,000,000-function module's (262 MB) kept GDB 6 s longer and 660 MB larger, and quitting
// at the pager's prompt waited for all of it.
void dump_text(Module& mod, const py::function& write) {
  sframe::dump_text({file_section(mod)}, [&](std::string_view piece) {
    write(py::str(piece.data(), piece.size()));
  });
}

// `unwindkit sframe check`: every problem the strict checks find, at link-time addresses (as
// `dump` and readelf show them); functions must lie in the file's executable segments.
// (text, passed).
std::pair<std::string, bool> check_text(Module& mod) {
  const auto bytes = mod.sframe_section();
  if (!bytes) return {no_table_text(mod.path(), {}, sframe::kSectionName), false};
  std::vector<Error> problems = mod.sframe_problems();
  if (auto s = mod.sframe(); !s && problems.empty()) problems.push_back(s.error());
  return {sframe::check_text(mod.path(), problems, bytes->format), problems.empty()};
}

// `unwindkit sframe lookup`: the rule at run-time `pc`. (text, found).
std::pair<std::string, bool> lookup_text(Module& mod, uint64_t pc) {
  if (!mod.sframe_section()) return {no_section_text(pc, mod.path(), sframe::kSectionName), false};
  auto rule = mod.sframe_rule(pc);
  return {sframe::lookup_text(mod.path(), pc, 0, rule), rule && *rule};
}

py::tuple frame_registers(Arch arch) {
  py::list inputs;
  for (uint16_t r : unwind_input_registers(arch)) inputs.append(gdb_register_name(arch, r));
  py::list passed;
  for (uint16_t r : gdb_passed_through_registers(arch)) passed.append(gdb_register_name(arch, r));
  return py::make_tuple(gdb_pc_name(arch), inputs, passed);
}

// `unwindkit bt`: the core's own walker (CFI, then SFrame, then the frame-pointer chain)
// over the modules GDB has loaded, independent of GDB's frames, printed as the core's bt
// report. `name_of(address)` gives GDB's (name, offset from the name) for a frame's lookup
// address, or None.
std::string walk(const FrameEngine& engine, Arch arch, const FrameValues& values,
                 const PythonMemory& memory, size_t max_frames, py::object name_of) {
  unwind::WalkOptions options;
  options.max_depth = max_frames;
  unwind::Walk w = unwind::walk(registers_from(arch, values), engine.module_map(), memory, options);
  std::vector<std::optional<unwind::SymbolHit>> names;
  for (const unwind::Frame& f : w.frames) {
    py::object hit = name_of(f.address.lookup_address());
    if (hit.is_none()) {
      names.emplace_back();
      continue;
    }
    auto [name, offset] = hit.cast<std::pair<std::string, uint64_t>>();
    // GDB names the lookup address; the report counts the offset from the pc itself.
    names.push_back(unwind::SymbolHit{name, offset + (f.pc() - f.address.lookup_address())});
  }
  return unwind::bt_text(w, names);
}

}  // namespace

}  // namespace unwindkit::gdb

PYBIND11_MODULE(_unwindkit, m) {
  using namespace unwindkit;
  using namespace unwindkit::gdb;
  m.doc() = "unwindkit core for the GDB plugin";
  m.attr("__version__") = std::string(kVersion);

  py::enum_<Arch>(m, "Arch")
      .value("x86_64", Arch::X86_64)
      .value("aarch64", Arch::AArch64)
      .value("s390x", Arch::S390x)
      .value("i386", Arch::I386);
  m.def("arch_from_gdb_name", &arch_from_gdb_name, py::arg("gdb_arch"),
        "Our Arch for gdb.Architecture.name(), or None when unsupported.");
  m.def(
      "lookup_address",
      [](uint64_t pc, bool return_address) {
        return (return_address ? unwind::CodeAddress::return_address(pc)
                               : unwind::CodeAddress::interrupted(pc))
            .lookup_address();
      },
      py::arg("pc"), py::arg("return_address"),
      "Where a frame's function and line are looked up (the core's CodeAddress).");
  m.def("frame_registers", &frame_registers, py::arg("arch"),
        "(pc name, names of the registers unwind() needs after the pc, names passed through)");

  py::class_<PythonMemory>(m, "Memory")
      .def(py::init<py::object>(), py::arg("read"),
           "Process memory through read(addr, size) -> buffer, cached in blocks until flush().")
      .def("flush", &PythonMemory::flush);

  py::class_<Module, std::shared_ptr<Module>>(m, "Module")
      .def_property_readonly("path", &Module::path)
      .def_property_readonly("bias", &Module::bias)
      .def_property_readonly("arch", &Module::arch)
      .def_property_readonly("has_cfi", &Module::has_cfi)
      .def_property_readonly("has_sframe",
                             [](Module& mod) { return mod.sframe_section().has_value(); })
      .def_property_readonly("sframe_address",
                             [](Module& mod) -> std::optional<uint64_t> {
                               auto s = mod.sframe_section();
                               if (!s) return std::nullopt;
                               return s->address + mod.bias();
                             })
      .def_property_readonly("sframe_name",
                             [](Module& mod) -> std::optional<std::string> {
                               auto s = mod.sframe_section();
                               if (!s) return std::nullopt;
                               return sframe::format_info(s->format).section_name;
                             })
      .def_property_readonly("sframe_size",
                             [](Module& mod) -> size_t {
                               auto s = mod.sframe_section();
                               return s ? s->bytes.size() : 0;
                             })
      .def_property_readonly("fde_count",
                             [](Module& mod) -> std::optional<size_t> {
                               auto s = mod.sframe();
                               if (!s || *s == nullptr) return std::nullopt;
                               return (*s)->function_count();
                             })
      .def_property_readonly("error", &error_text)
      .def_property_readonly("ranges", &Module::code_ranges)
      .def("contains", &Module::contains, py::arg("pc"))
      .def("dump", &dump_text, py::arg("write"),
           "`unwindkit sframe dump`'s text, handed to `write` piece by piece.")
      .def("check", &check_text, "`unwindkit sframe check`'s (text, passed).")
      .def("lookup_text", &lookup_text, py::arg("pc"),
           "`unwindkit sframe lookup`'s (text, found) at a run-time pc.");
  m.def("no_module_text", &no_module_text, py::arg("pc"),
        "What a lookup says of an address in no loaded file.");
  m.def("link_addresses", &link_addresses, py::arg("path"),
        "{'entry', 'type', '.text', 'first_load'} of an ELF file at link time; {} if "
        "unreadable.");
  m.def("prepare_module", &prepare_module, py::arg("path"),
        "Starts the strict checks of a file's SFrame (and an index of its functions) on a "
        "thread of their own; load_module() of that path then takes them. Never raises.");
  m.def("load_module", &load_module, py::arg("path"), py::arg("bias"),
        py::arg("debug_files") = std::vector<std::string>{},
        "Loads a file's tables at a load bias; never raises (see Module.error).");

  py::class_<FrameEngine>(m, "Engine")
      .def(py::init<>())
      .def("add", &FrameEngine::add, py::arg("module"))
      .def("clear", &FrameEngine::clear)
      .def_property_readonly("modules", &FrameEngine::modules)
      .def(
          "module_for",
          [](const FrameEngine& e, uint64_t pc) { return e.module_for(pc); },
          py::arg("pc"))
      .def_property("prefer_sframe", &FrameEngine::prefer_sframe, &FrameEngine::set_prefer_sframe)
      .def_property_readonly("claimed", &FrameEngine::claimed)
      .def_property_readonly("failed", &FrameEngine::failed)
      .def_property_readonly("recent_errors",
                             [](const FrameEngine& e) {
                               return std::vector<std::string>(e.recent_errors().begin(),
                                                               e.recent_errors().end());
                             })
      .def("record_error", &FrameEngine::record_error, py::arg("message"))
      .def("ended_at", &FrameEngine::ended_at, py::arg("pc"),
           "Whether a step of ours ended the stack at a frame with this pc (its rule says the "
           "return address is undefined).")
      .def_property_readonly("ended_any", &FrameEngine::ended_any)
      .def("unwind_pending_frame", &unwind_pending_frame, py::arg("pending_frame"),
           py::arg("memory"), py::arg("make_frame_id"),
           "One frame for GDB's unwinder: a gdb.UnwindInfo, or None when the frame is not "
           "ours or could not be stepped (see recent_errors).")
      .def("walk", &walk, py::arg("arch"), py::arg("values"), py::arg("memory"),
           py::arg("max_frames"), py::arg("name_of"),
           "The core's walk, as the core's bt report text.");

  bind_trace(m);
  add_cbf_bindings(m);
  add_compact_unwind_bindings(m);
  add_side_file_bindings(m);
}
