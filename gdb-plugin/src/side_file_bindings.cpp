// The side file GDB attaches to a module (see side_file_bindings.h).
#include "side_file_bindings.h"

#include <pybind11/stl.h>

#include "unwindkit/debuginfo/synthesize.h"
#include "unwindkit/server/folder_budget.h"
#include "unwindkit/unwind/modules.h"

namespace py = pybind11;

namespace unwindkit::gdb {
namespace {

// Whether some SFrame function has no CFI in the module or its debug files: only then does
// GDB need the side file. Measured with GDB 13: where both have a function, it unwinds with
// the side file's `.debug_frame` rather than the file's own `.eh_frame`, which knows more
// (callee-saved registers). A program that kept `.eh_frame` has CFI wherever it has SFrame;
// a static program linked from objects without `.eh_frame` has libc's CFI but none for its
// own functions.
bool sframe_beyond_cfi(unwind::Module& module, const unwind::Module::SectionBytes& bytes) {
  auto cfi = module.cfi();
  if (!cfi) return false;  // nor can a side file be made
  // No CFI at all (the usual stripped program): every function is beyond it.
  if ((*cfi)->empty()) return true;
  // A section whose index cannot be read adds nothing either. bias 0: run-time = link-time
  // address.
  auto beyond = debuginfo::sframe_beyond_cfi(bytes.bytes, bytes.address, bytes.format, **cfi);
  return beyond && *beyond;
}

// (debug file bytes or None, build-id bytes, why there is none or what was left out,
// fallback, settled). `fallback`: the file has SFrame beyond its CFI but no side file gives it
// to GDB, so the Python unwinder must unwind its frames; otherwise GDB's own unwinders do every
// frame of the file that our tables could. `settled`: the answer "none" follows from the file's
// bytes alone (no `.sframe`, CFI covers it, nothing to add), so the plugin may remember it by
// build-id and not ask again in a later session; a file we could not read is asked again. GDB prints `?? ()` for a function it has no symbol for,
// also with CFI: the file names only what `.dynsym` and `.trace` name.
// Only the section headers are read for a file without `.sframe` (most libraries); the
// section itself is checked and decoded once, by synthesize().
// `wait_limit`: the largest `.sframe` (bytes) whose whole side file is made now; a larger
// one gets the entry point's rule alone (`later` true: the whole file is for later).
py::tuple side_file(const std::string& path, const std::vector<std::string>& debug_files,
                    std::optional<uint64_t> wait_limit) {
  bool later = false;
  auto answer = [&later](std::optional<py::bytes> bytes, py::bytes build_id,
                         const std::string& note, bool fallback = false, bool settled = true) {
    return py::make_tuple(bytes ? py::object(*bytes) : py::object(py::none()), build_id, note,
                          fallback, settled, later);
  };
  unwind::Module module(path, path, {});
  module.set_bias(0);
  for (const auto& d : debug_files) module.add_debug_file(d);
  auto elf = module.elf();
  if (!elf) return answer(std::nullopt, py::bytes(), elf.error().to_string(), false, false);
  auto bytes = module.sframe_section();
  if (!bytes || bytes->bytes.empty()) return answer(std::nullopt, py::bytes(), "no .sframe");
  if (!sframe_beyond_cfi(module, *bytes))
    return answer(std::nullopt, py::bytes(), "its DWARF CFI covers every SFrame function");
  debuginfo::SynthesizeOptions options{debuginfo::FallbackNames::None};
  later = options.entry_point_only = wait_limit && bytes->bytes.size() > *wait_limit;
  auto file = debuginfo::synthesize(**elf, options);
  if (!file) {  // nor would the whole file be made later (a PCMASK function past the limit)
    later = false;
    return answer(std::nullopt, py::bytes(), file.error().to_string(), true, false);
  }
  std::string note;
  for (const Error& e : file->left_out) note += (note.empty() ? "left out: " : "; ") + e.to_string();
  auto id = (*elf)->build_id();
  py::bytes build_id = id ? py::bytes(reinterpret_cast<const char*>(id->data()), id->size())
                          : py::bytes();
  // Nothing to add: no function to describe, or a section that failed the strict checks,
  // which the Python unwinder refuses as well (Module::sframe()).
  // With `later`, the whole file may still have something to add.
  if (file->bytes.empty())
    return answer(std::nullopt, build_id, note.empty() ? "nothing to add" : note, false, !later);
  return answer(py::bytes(reinterpret_cast<const char*>(file->bytes.data()), file->bytes.size()),
                build_id, note);
}

}  // namespace

void add_side_file_bindings(py::module_& m) {
  m.def("side_file", &side_file, py::arg("path"),
        py::arg("debug_files") = std::vector<std::string>{},
        py::arg("wait_limit") = std::optional<uint64_t>{},
        "(bytes or None, build-id bytes, note, fallback, settled, later): the debug file that "
        "gives GDB's DWARF unwinder the SFrame of a file whose CFI (its own or `debug_files`') "
        "does not cover it; fallback: none could be made, the Python unwinder must do the "
        "file's frames; settled: no file is needed, whatever session asks; later: the `.sframe` "
        "is larger than `wait_limit` bytes, the file holds the entry point's rule alone (call "
        "again without the limit for the whole one); never raises.");
  m.def(
      "trim_folder",
      [](const std::string& folder, uint64_t max_bytes, const std::vector<std::string>& suffixes,
         const std::string& keep) {
        const std::vector<std::string_view> views(suffixes.begin(), suffixes.end());
        server::trim_folder(folder, max_bytes, views, keep);
      },
      py::arg("folder"), py::arg("max_bytes"), py::arg("suffixes"), py::arg("keep"),
      "Holds the side files of `folder` (names ending with one of `suffixes`) to `max_bytes`, "
      "least recently used (modified) out first; `keep` stays. Temporaries a writer that died "
      "left (\".tmp\" in the name, an hour old) go too. The server's and LLDB's policy.");
}

}  // namespace unwindkit::gdb
