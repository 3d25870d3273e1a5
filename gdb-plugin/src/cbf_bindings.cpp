// CBF for the GDB commands (see cbf_bindings.h): decoded records as plain Python values and
// frame lists encoded back; problems come back as strings, never as exceptions into GDB.
#include "cbf_bindings.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/encode.h"
#include "unwindkit/cbf/report.h"
#include "unwindkit/cbf/text.h"

namespace py = pybind11;

namespace unwindkit::gdb {
namespace {

// `unwindkit cbf decode`'s (text, error or None) for the records in `data`, read at `base`:
// only the first one, or every concatenated one (`stream`). `symbolize(address)` gives
// (symbol, symbol start, module, file, line) with None for what GDB does not know.
using PlaceTuple = std::tuple<std::optional<std::string>, uint64_t, std::string,
                              std::optional<std::string>, uint64_t>;

std::pair<std::string, std::optional<std::string>> decode_text(const py::bytes& data, bool stream,
                                                               uint64_t base,
                                                               const py::function& symbolize) {
  const std::string_view view = data;
  const Bytes bytes(reinterpret_cast<const uint8_t*>(view.data()), view.size());
  std::vector<Result<cbf::Backtrace>> records;
  if (stream) records = cbf::decode_stream(bytes);
  else records.push_back(cbf::decode(bytes));
  const auto report = cbf::decode_report(records, base, [&](uint64_t address) {
    const auto [symbol, start, module, file, line] = symbolize(address).cast<PlaceTuple>();
    return cbf::Place{symbol.value_or(""), start, module, file.value_or(""), line};
  });
  return {report.text, report.error};
}

std::optional<cbf::FrameKind> kind_from_name(const std::string& name) {
  for (auto k : {cbf::FrameKind::ProgramCounter, cbf::FrameKind::ReturnAddress,
                 cbf::FrameKind::AsyncResumePoint, cbf::FrameKind::Omitted,
                 cbf::FrameKind::Truncated})
    if (name == cbf::kind_name(k)) return k;
  return std::nullopt;
}

// `unwindkit cbf encode` of `frames` [(kind, value)] of GDB thread `thread`: (text, the CBF
// bytes), or a string saying why they cannot be encoded. `as_base64` shows base64 rather than
// hex; `path` names the file the caller writes the bytes to (shown instead of them).
using FrameList = std::vector<std::pair<std::string, uint64_t>>;

std::variant<std::pair<std::string, py::bytes>, std::string> encode(
    unsigned word_bits, const FrameList& frames, uint64_t thread, bool as_base64,
    const std::string& path) {
  cbf::WordSize ws;
  switch (word_bits) {
    case 16: ws = cbf::WordSize::Bits16; break;
    case 32: ws = cbf::WordSize::Bits32; break;
    case 64: ws = cbf::WordSize::Bits64; break;
    default: return "word size must be 16, 32 or 64 bits, not " + std::to_string(word_bits);
  }
  std::vector<cbf::Run> runs;
  for (const auto& [name, value] : frames) {
    const auto kind = kind_from_name(name);
    if (!kind) return "unknown frame kind '" + name + "'";
    cbf::append(runs, cbf::Frame{*kind, value});
  }
  auto bytes = cbf::encode(ws, runs);
  if (!bytes) return bytes.error().to_string();
  const std::string text =
      cbf::encode_text(runs, ws, *bytes, {thread, !as_base64, as_base64, path});
  return std::pair{text, py::bytes(reinterpret_cast<const char*>(bytes->data()), bytes->size())};
}

std::vector<uint8_t> to_vector(const py::bytes& data) {
  const std::string_view view = data;
  return {view.begin(), view.end()};
}

}  // namespace

void add_cbf_bindings(py::module_& m) {
  m.def("cbf_decode_text", &decode_text, py::arg("data"), py::arg("stream"), py::arg("base"),
        py::arg("symbolize"),
        "`unwindkit cbf decode`'s (text, error or None) for the CBF records in data read at "
        "base (the first only unless stream); symbolize(address) -> (symbol or None, start, "
        "module, file or None, line).");
  m.def("cbf_encode", &encode, py::arg("word_bits"), py::arg("frames"), py::arg("thread"),
        py::arg("as_base64"), py::arg("path"),
        "`unwindkit cbf encode`'s (text, CBF bytes) of [(kind, value)] as Swift's encoder writes "
        "them, or a string saying why not; path (or '') is the file the bytes go to.");
  m.def(
      "cbf_to_base64", [](const py::bytes& b) { return cbf::to_base64(to_vector(b)); },
      py::arg("data"), "Standard alphabet without padding, as a Swift Backtrace's JSON holds it.");
}

}  // namespace unwindkit::gdb
