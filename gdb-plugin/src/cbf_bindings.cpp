// CBF for the GDB commands (see cbf_bindings.h): decoded records as plain Python values and
// frame lists encoded back; problems come back as strings, never as exceptions into GDB.
#include "cbf_bindings.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/encode.h"
#include "unwindkit/cbf/text.h"

namespace py = pybind11;

namespace unwindkit::gdb {
namespace {

// One decoded record: (word bits, [(kind, value, count)], encoded size, problem or None);
// kinds as cbf::kind_name ("pc", "ra", "async", "omit", "truncated").
using Runs = std::vector<std::tuple<std::string, uint64_t, uint64_t>>;
using Record = std::tuple<unsigned, Runs, size_t, std::optional<std::string>>;

Record to_record(const cbf::Backtrace& bt) {
  Runs runs;
  for (const cbf::Run& r : bt.runs)
    runs.emplace_back(cbf::kind_name(r.frame.kind), r.frame.value, r.count);
  std::optional<std::string> problem;
  if (bt.problem) problem = bt.problem->to_string();
  return {cbf::word_bytes(bt.word_size) * 8, std::move(runs), bt.encoded_size, problem};
}

// Records in `data`: only the first one, or every concatenated one (`stream`). A bad info
// byte ends the list as a string.
std::vector<std::variant<Record, std::string>> decode(const py::bytes& data, bool stream) {
  const std::string_view view = data;
  const Bytes bytes(reinterpret_cast<const uint8_t*>(view.data()), view.size());
  std::vector<std::variant<Record, std::string>> out;
  std::vector<Result<cbf::Backtrace>> records;
  if (stream) records = cbf::decode_stream(bytes);
  else records.push_back(cbf::decode(bytes));
  for (const auto& rec : records) {
    if (rec) out.emplace_back(to_record(*rec));
    else out.emplace_back(rec.error().to_string());
  }
  return out;
}

std::optional<cbf::FrameKind> kind_from_name(const std::string& name) {
  for (auto k : {cbf::FrameKind::ProgramCounter, cbf::FrameKind::ReturnAddress,
                 cbf::FrameKind::AsyncResumePoint, cbf::FrameKind::Omitted,
                 cbf::FrameKind::Truncated})
    if (name == cbf::kind_name(k)) return k;
  return std::nullopt;
}

// The CBF bytes of `frames` [(kind, value)], or a string saying why they cannot be encoded.
using FrameList = std::vector<std::pair<std::string, uint64_t>>;

std::variant<py::bytes, std::string> encode(unsigned word_bits, const FrameList& frames) {
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
  return py::bytes(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

std::vector<uint8_t> to_vector(const py::bytes& data) {
  const std::string_view view = data;
  return {view.begin(), view.end()};
}

}  // namespace

void add_cbf_bindings(py::module_& m) {
  m.def("cbf_decode", &decode, py::arg("data"), py::arg("stream"),
        "CBF records in data (the first only unless stream): each (word bits, "
        "[(kind, value, count)], encoded size, problem or None), or a string for a bad info byte.");
  m.def("cbf_encode", &encode, py::arg("word_bits"), py::arg("frames"),
        "CBF bytes of [(kind, value)] as Swift's encoder writes them, or a string saying why not.");
  m.def(
      "cbf_to_hex", [](const py::bytes& b) { return cbf::to_hex(to_vector(b)); }, py::arg("data"));
  m.def(
      "cbf_to_base64", [](const py::bytes& b) { return cbf::to_base64(to_vector(b)); },
      py::arg("data"), "Standard alphabet without padding, as a Swift Backtrace's JSON holds it.");
}

}  // namespace unwindkit::gdb
