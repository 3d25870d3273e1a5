// The `_unwindkit` extension: the core's table loading, lookup, stepping, dump and check,
// shaped for the Python side of the GDB plugin. Every entry point returns values or None;
// table and memory problems come back as strings, never as exceptions into GDB.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "cbf_bindings.h"
#include "compact_unwind_bindings.h"
#include "frame_engine.h"
#include "gdb_registers.h"
#include "loaded_module.h"
#include "pending_frame.h"
#include "python_memory.h"
#include "trace_table.h"
#include "unwindkit/file_report.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/report.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"
#include "unwindkit/unwind/modules.h"
#include "unwindkit/unwind/walker.h"

namespace py = pybind11;

namespace unwindkit::gdb {

namespace {

std::optional<std::string> error_text(const LoadedModule& m) {
  if (!m.error()) return std::nullopt;
  return m.error()->to_string();
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
  auto file = elf::ElfFile::open(path);
  if (!file) return out;
  out["entry"] = file->entry();
  out["type"] = file->type();
  if (const elf::Section* text = file->section(".text")) out[".text"] = text->addr;
  return out;
}

// `unwindkit sframe dump`: readelf --sframe's text, decoded at the link-time address as
// readelf shows it.
std::string dump_text(const LoadedModule& mod) {
  sframe::FileTable table{mod.path(), nullptr, {}, mod.sframe_bytes().size()};
  if (!mod.has_sframe_bytes()) return sframe::dump_text({table});
  auto section = sframe::decode(mod.sframe_bytes(), mod.sframe_link_address());
  if (section) table.section = &*section;
  else table.problem = section.error().to_string();
  return sframe::dump_text({table});
}

// `unwindkit sframe check`: every problem the strict checks find, at link-time addresses (as
// `dump` and readelf show them); functions must lie in the file's executable segments.
// (text, passed).
std::pair<std::string, bool> check_text(const LoadedModule& mod) {
  if (!mod.has_sframe_bytes()) return {sframe::dump_text({{mod.path(), nullptr, {}, 0}}), false};
  std::vector<sframe::AddressRange> text;
  for (const AddressRange& r : mod.ranges())
    text.push_back({r.start - mod.bias(), r.end - mod.bias()});
  const auto problems = sframe::validate(mod.sframe_bytes(), mod.sframe_link_address(), text);
  return {sframe::check_text(mod.path(), problems), problems.empty()};
}

// `unwindkit sframe lookup`: the rule at run-time `pc` (the module's table holds run-time
// addresses). (text, found).
std::pair<std::string, bool> lookup_text(const LoadedModule& mod, uint64_t pc) {
  if (!mod.has_sframe_bytes())
    return {no_section_text(pc, mod.path(), sframe::kSectionName), false};
  auto rule = mod.lookup(pc);
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
// over the modules GDB has loaded, independent of GDB's frames.
py::tuple walk(const FrameEngine& engine, Arch arch, const FrameValues& values,
               const PythonMemory& memory, size_t max_frames) {
  unwind::ModuleMap map;
  for (const auto& loaded : engine.modules()) {
    std::vector<unwind::Mapping> mappings;
    for (const auto& m : loaded->load_mappings())
      mappings.push_back({m.start, m.end, m.file_offset});
    map.add(unwind::Module(loaded->path(), loaded->path(), std::move(mappings)));
  }
  unwind::WalkOptions options;
  options.max_depth = max_frames;
  unwind::Walk w = unwind::walk(registers_from(arch, values), map, memory, options);
  py::list frames;
  for (const unwind::Frame& f : w.frames) {
    frames.append(py::make_tuple(f.pc, f.cfa, f.source ? source_name(*f.source) : "",
                                 f.module != nullptr ? f.module->path() : ""));
  }
  return py::make_tuple(frames, w.stop_reason);
}

}  // namespace

}  // namespace unwindkit::gdb

PYBIND11_MODULE(_unwindkit, m) {
  using namespace unwindkit;
  using namespace unwindkit::gdb;
  m.doc() = "unwindkit core for the GDB plugin";

  py::enum_<Arch>(m, "Arch")
      .value("x86_64", Arch::X86_64)
      .value("aarch64", Arch::AArch64)
      .value("s390x", Arch::S390x)
      .value("i386", Arch::I386);
  m.def("arch_from_gdb_name", &arch_from_gdb_name, py::arg("gdb_arch"),
        "Our Arch for gdb.Architecture.name(), or None when unsupported.");
  m.def("frame_registers", &frame_registers, py::arg("arch"),
        "(pc name, names of the registers unwind() needs after the pc, names passed through)");

  py::class_<PythonMemory>(m, "Memory")
      .def(py::init<py::object>(), py::arg("read"),
           "Process memory through read(addr, size) -> buffer, cached in blocks until flush().")
      .def("flush", &PythonMemory::flush);

  py::class_<LoadedModule, std::shared_ptr<LoadedModule>>(m, "Module")
      .def_property_readonly("path", &LoadedModule::path)
      .def_property_readonly("bias", &LoadedModule::bias)
      .def_property_readonly("arch", &LoadedModule::arch)
      .def_property_readonly("has_cfi", &LoadedModule::has_cfi)
      .def_property_readonly("has_sframe", &LoadedModule::has_sframe_bytes)
      .def_property_readonly("sframe_address", &LoadedModule::sframe_address)
      .def_property_readonly("sframe_size",
                             [](const LoadedModule& mod) { return mod.sframe_bytes().size(); })
      .def_property_readonly("fde_count",
                             [](const LoadedModule& mod) -> std::optional<size_t> {
                               if (mod.sframe() == nullptr) return std::nullopt;
                               return mod.sframe()->function_count();
                             })
      .def_property_readonly("error", &error_text)
      .def_property_readonly("ranges",
                             [](const LoadedModule& mod) {
                               std::vector<std::pair<uint64_t, uint64_t>> out;
                               for (const auto& r : mod.ranges()) out.emplace_back(r.start, r.end);
                               return out;
                             })
      .def("contains", &LoadedModule::contains, py::arg("pc"))
      .def("dump", &dump_text, "`unwindkit sframe dump`'s text.")
      .def("check", &check_text, "`unwindkit sframe check`'s (text, passed).")
      .def("lookup_text", &lookup_text, py::arg("pc"),
           "`unwindkit sframe lookup`'s (text, found) at a run-time pc.");
  m.def("no_module_text", &no_module_text, py::arg("pc"),
        "What a lookup says of an address in no loaded file.");
  m.def("link_addresses", &link_addresses, py::arg("path"),
        "{'entry', 'type', '.text'} of an ELF file at link time; {} if unreadable.");
  m.def("load_module", &LoadedModule::load, py::arg("path"), py::arg("bias"),
        py::arg("debug_files") = std::vector<std::string>{},
        "Loads a file's tables at a load bias; never raises (see Module.error).");

  py::class_<FrameEngine>(m, "Engine")
      .def(py::init<>())
      .def("add", &FrameEngine::add, py::arg("module"))
      .def("clear", &FrameEngine::clear)
      .def_property_readonly("modules", &FrameEngine::modules)
      .def(
          "module_for",
          [](const FrameEngine& e, uint64_t pc) -> std::shared_ptr<LoadedModule> {
            for (const auto& mod : e.modules())
              if (mod->contains(pc)) return mod;
            return nullptr;
          },
          py::arg("pc"))
      .def_readwrite("prefer_sframe", &FrameEngine::prefer_sframe)
      .def_property_readonly("claimed", &FrameEngine::claimed)
      .def_property_readonly("failed", &FrameEngine::failed)
      .def_property_readonly("recent_errors",
                             [](const FrameEngine& e) {
                               return std::vector<std::string>(e.recent_errors().begin(),
                                                               e.recent_errors().end());
                             })
      .def("record_error", &FrameEngine::record_error, py::arg("message"))
      .def("unwind_pending_frame", &unwind_pending_frame, py::arg("pending_frame"),
           py::arg("memory"), py::arg("make_frame_id"),
           "One frame for GDB's unwinder: a gdb.UnwindInfo, or None when the frame is not "
           "ours or could not be stepped (see recent_errors).")
      .def("walk", &walk, py::arg("arch"), py::arg("values"), py::arg("memory"),
           py::arg("max_frames"),
           "The core's walk: ([(pc, cfa or None, source or '', module path or '')], why it "
           "stopped).");

  bind_trace(m);
  add_cbf_bindings(m);
  add_compact_unwind_bindings(m);
}
