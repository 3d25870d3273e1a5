#include "pending_frame.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gdb_registers.h"

namespace py = pybind11;

namespace unwindkit::gdb {

namespace {

// How GDB names the registers of one architecture. GDB looks a register name up by string
// comparison against every register on each call; a gdb.RegisterDescriptor (GDB 13's
// Architecture.registers()) names it by number, so descriptors are used where GDB has them.
struct ArchRegisters {
  Arch arch;
  py::dict descriptors;  // name -> gdb.RegisterDescriptor
  py::object pc;
  std::vector<uint16_t> inputs;
  std::vector<py::object> input_ids;
  std::vector<uint16_t> passed_through;
  std::map<uint16_t, py::object> ids;  // every DWARF register a step may return

  py::object id(const std::string& name) const {
    py::str key(name);
    return descriptors.contains(key) ? py::object(descriptors[key]) : py::object(key);
  }
};

ArchRegisters* registers_for(const py::object& arch_object) {
  auto arch = arch_from_gdb_name(py::str(arch_object.attr("name")()).cast<std::string>());
  if (!arch) return nullptr;
  auto* regs = new ArchRegisters{*arch, {}, {}, {}, {}, {}, {}};
  if (py::hasattr(arch_object, "registers")) {
    for (py::handle d : arch_object.attr("registers")()) regs->descriptors[d.attr("name")] = d;
  }
  regs->pc = regs->id(std::string(gdb_pc_name(*arch)));
  for (uint16_t r : unwind_input_registers(*arch)) {
    regs->inputs.push_back(r);
    regs->input_ids.push_back(regs->id(gdb_register_name(*arch, r)));
  }
  regs->passed_through = gdb_passed_through_registers(*arch);
  return regs;
}

const py::object& id_of(ArchRegisters& regs, uint16_t dwarf_reg) {
  auto found = regs.ids.find(dwarf_reg);
  if (found == regs.ids.end())
    found = regs.ids.emplace(dwarf_reg, regs.id(gdb_register_name(regs.arch, dwarf_reg))).first;
  return found->second;
}

// A register's value as the unsigned bits GDB holds (int() of a gdb.Value may be negative).
// A floating-point register's (s390x's FPRs) int() is its number, not its bits: those are its
// bytes (gdb.Value.bytes, GDB 14 and later; GDB 13 has none, and the register then counts as
// unavailable), in the target's byte order.
uint64_t bits(const py::object& value, Arch arch) {
  static const int kFloat = py::module_::import("gdb").attr("TYPE_CODE_FLT").cast<int>();
  // Asked of the class: asking an <unavailable> value raises (and hasattr would report it).
  static const bool kHasBytes = py::hasattr(py::module_::import("gdb").attr("Value"), "bytes");
  if (value.attr("type").attr("strip_typedefs")().attr("code").cast<int>() == kFloat) {
    if (!kHasBytes) {
      PyErr_SetString(PyExc_ValueError, "a floating-point register's bits need gdb.Value.bytes");
      throw py::error_already_set();
    }
    const std::string raw = py::bytes(value.attr("bytes"));
    const bool big = arch == Arch::S390x;
    uint64_t v = 0;
    for (size_t i = 0; i < raw.size() && i < sizeof v; ++i)
      v = v << 8 | static_cast<uint8_t>(raw[big ? i : raw.size() - 1 - i]);
    return v;
  }
  py::int_ number(value);
  return PyLong_AsUnsignedLongLongMask(number.ptr());
}

}  // namespace

py::object unwind_pending_frame(FrameEngine& engine, py::object pending_frame,
                                const PythonMemory& memory, py::object make_frame_id) {
  // GDB keeps one gdb.Architecture object per architecture: key our register ids by it.
  // Never destroyed: they hold Python objects, which must not be released after GDB has
  // finalized Python at exit.
  static auto* by_arch_object = new py::dict();
  py::object arch_object = pending_frame.attr("architecture")();
  ArchRegisters* regs = nullptr;
  if (by_arch_object->contains(arch_object)) {
    regs = static_cast<ArchRegisters*>(
        PyLong_AsVoidPtr((*by_arch_object)[arch_object].ptr()));
  } else {
    regs = registers_for(arch_object);
    (*by_arch_object)[arch_object] = py::reinterpret_steal<py::object>(PyLong_FromVoidPtr(regs));
  }
  if (regs == nullptr) return py::none();
  py::object read_register = pending_frame.attr("read_register");

  RegisterSet in(regs->arch);
  in.set_pc(bits(read_register(regs->pc), regs->arch));
  for (size_t i = 0; i < regs->inputs.size(); ++i) {
    try {
      in.set(regs->inputs[i], bits(read_register(regs->input_ids[i]), regs->arch));
    } catch (const py::error_already_set&) {
      // <unavailable> / <not saved> in this frame: the stepper works without it or says so.
    }
  }
  auto level = pending_frame.attr("level")().cast<unsigned>();
  auto stepped = engine.unwind(level, in, memory);
  if (!stepped) return py::none();

  const RegisterSet& caller = stepped->caller;
  py::object info = pending_frame.attr("create_unwind_info")(
      make_frame_id(*stepped->frame.cfa, stepped->frame.rule->func_start));
  py::object add = info.attr("add_saved_register");
  py::object gdb_value = py::module_::import("gdb").attr("Value");
  // Plain 64-bit gdb.Values: GDB takes the bytes, and every register a step recovers is a
  // 64-bit integer or pointer.
  add(regs->pc, gdb_value(*caller.pc()));
  for (uint16_t r = 0; r < RegisterSet::kMaxRegs; ++r)
    if (auto v = caller.get(r)) add(id_of(*regs, r), gdb_value(*v));
  // The step was given only the registers it reads (SP, FP, the RA register), so callee-saved
  // registers its rule proves unchanged are passed through from this frame. One the rule
  // leaves unproven is not added: GDB shows it <not saved>, never a wrong value.
  for (uint16_t r : carried_registers(*stepped->frame.rule)) {
    if (caller.known(r) || std::find(regs->passed_through.begin(), regs->passed_through.end(),
                                     r) == regs->passed_through.end())
      continue;
    const py::object& id = id_of(*regs, r);
    try {
      // Only a value this frame has: one <not saved> here stays so in the caller (GDB fails
      // the whole frame when handed an unavailable value).
      add(id, gdb_value(bits(read_register(id), regs->arch)));
    } catch (const py::error_already_set&) {
    }
  }
  return info;
}

}  // namespace unwindkit::gdb
