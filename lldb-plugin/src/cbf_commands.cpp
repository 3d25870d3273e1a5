// `unwindkit cbf ...` (see cbf_commands.h). The output matches the GDB plugin's line for line.
#include "cbf_commands.h"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/encode.h"
#include "unwindkit/cbf/report.h"
#include "unwindkit/cbf/text.h"

namespace unwindkit::lldb_plugin {
namespace {

// Bytes read when no LEN is given: a record ends at its end/trunc instruction, well before
// this for any real backtrace (a million-frame `rep` is 8 bytes).
constexpr size_t kDefaultWindow = 64 * 1024;
constexpr OptionSpec kEncodeOptions[] = {
    {'t', "thread", true}, {'o', "output", true}, {0, "base64", false}};

// A number, or an expression's value (an array, such as a global `blob`, means its address).
std::optional<uint64_t> address_arg(lldb::SBTarget target, const std::string& text,
                                    std::string& error) {
  uint64_t n = 0;
  if (parse_number(text, n)) return n;
  lldb::SBValue value = target.EvaluateExpression(text.c_str());
  if (!value.IsValid() || value.GetError().Fail()) {
    error = fmt::format("cannot evaluate '{}': {}", text,
                        value.IsValid() && value.GetError().GetCString() != nullptr
                            ? value.GetError().GetCString()
                            : "no value");
    return std::nullopt;
  }
  if (value.GetType().IsArrayType()) return value.GetLoadAddress();
  return value.GetValueAsUnsigned();
}

// Exactly `size` bytes at `addr`. A core lacks file-backed pages (.rodata): those are read
// from the module files through the target.
bool read_exact(lldb::SBTarget target, uint64_t addr, size_t size, std::vector<uint8_t>& out) {
  out.assign(size, 0);
  lldb::SBError error;
  if (target.GetProcess().ReadMemory(addr, out.data(), size, error) == size && error.Success())
    return true;
  lldb::SBAddress address = target.ResolveLoadAddress(addr);
  // SBTarget::ReadMemory can report an error and still have read everything: trust the count.
  return address.GetSection().IsValid() &&
         target.ReadMemory(address, out.data(), size, error) == size;
}

// The longest readable prefix of [addr, addr + window): near the end of a mapping the full
// window fails, so search for the last readable byte count.
bool read_window(lldb::SBTarget target, uint64_t addr, size_t window, std::vector<uint8_t>& out) {
  if (read_exact(target, addr, window, out)) return true;
  std::vector<uint8_t> good, probe;
  size_t bad = window;  // a length known to fail
  while (bad - good.size() > 1) {
    const size_t mid = (good.size() + bad) / 2;
    if (read_exact(target, addr, mid, probe)) good.swap(probe);
    else bad = mid;
  }
  out = std::move(good);
  return !out.empty();
}

std::string base_name(const char* path) {
  const std::string p = path != nullptr ? path : "?";
  return p.substr(p.find_last_of('/') + 1);
}

// What LLDB knows of `addr` for the core's report: symbol, module and line.
cbf::Place place(lldb::SBTarget target, uint64_t addr) {
  cbf::Place p;
  lldb::SBSymbolContext sc = target.ResolveSymbolContextForAddress(
      target.ResolveLoadAddress(addr), lldb::eSymbolContextEverything);
  lldb::SBSymbol symbol = sc.GetSymbol();
  const uint64_t start = symbol.IsValid() ? symbol.GetStartAddress().GetLoadAddress(target)
                                          : LLDB_INVALID_ADDRESS;
  if (symbol.IsValid() && symbol.GetName() != nullptr && start != LLDB_INVALID_ADDRESS) {
    p.symbol = symbol.GetName();
    p.symbol_start = start;
    p.module = base_name(sc.GetModule().GetFileSpec().GetFilename());
  }
  lldb::SBLineEntry line = sc.GetLineEntry();
  if (line.IsValid() && line.GetFileSpec().GetFilename() != nullptr) {
    p.file = line.GetFileSpec().GetFilename();
    p.line = line.GetLine();
  }
  return p;
}

}  // namespace

bool CbfDecodeCommand::run(lldb::SBDebugger debugger, char** argv,
                           lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, {});
  if (!args.error.empty() || args.positional.empty() || args.positional.size() > 2)
    return usage_error(result, args.error.empty() ? "usage: unwindkit cbf decode ADDR [LEN]"
                                                   : args.error);
  lldb::SBTarget target = debugger.GetSelectedTarget();
  if (!target.GetProcess().IsValid()) return usage_error(result, "no process or core");
  std::string error;
  const auto addr = address_arg(target, args.positional[0], error);
  if (!addr) return usage_error(result, error);
  std::vector<uint8_t> data;
  const bool stream = args.positional.size() == 2;
  if (stream) {
    uint64_t length = 0;
    if (!parse_number(args.positional[1], length) || length == 0)
      return usage_error(result, "LEN must be a positive number");
    if (!read_exact(target, *addr, length, data))
      return usage_error(result, fmt::format("cannot read {} bytes at {:#x}", length, *addr));
  } else if (!read_window(target, *addr, kDefaultWindow, data)) {
    return usage_error(result, fmt::format("cannot read memory at {:#x}", *addr));
  }
  std::vector<Result<cbf::Backtrace>> records;
  if (stream) records = cbf::decode_stream(data);
  else records.push_back(cbf::decode(data));
  const cbf::DecodeReport report =
      cbf::decode_report(records, *addr, [&](uint64_t a) { return place(target, a); });
  print(result, report.text);
  if (report.error) return usage_error(result, *report.error);
  return true;
}

bool CbfEncodeCommand::run(lldb::SBDebugger debugger, char** argv,
                           lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kEncodeOptions);
  if (!args.error.empty() || !args.positional.empty())
    return usage_error(result, args.error.empty()
                                   ? "usage: unwindkit cbf encode [-t THREAD] [-o FILE] [--base64]"
                                   : args.error);
  lldb::SBTarget target = debugger.GetSelectedTarget();
  lldb::SBProcess process = target.GetProcess();
  if (!process.IsValid()) return usage_error(result, "no process or core");
  lldb::SBThread thread = process.GetSelectedThread();
  if (args.has("thread")) {
    uint64_t id = 0;
    if (!parse_number(args.get("thread"), id))
      return usage_error(result, "THREAD must be a thread index (as `thread list` shows)");
    thread = process.GetThreadByIndexID(static_cast<uint32_t>(id));
    if (!thread.IsValid()) return usage_error(result, fmt::format("no thread #{}", id));
  }
  // Machine frames only: inlined and artificial (tail-call) frames have no pc of their own.
  // The newest is a pc, the others return addresses.
  std::vector<cbf::Run> runs;
  for (uint32_t i = 0; i < thread.GetNumFrames(); ++i) {
    lldb::SBFrame frame = thread.GetFrameAtIndex(i);
    if (frame.IsInlined() || frame.IsArtificial()) continue;
    cbf::append(runs, cbf::Frame{runs.empty() ? cbf::FrameKind::ProgramCounter
                                                : cbf::FrameKind::ReturnAddress,
                                 frame.GetPC()});
  }
  const uint32_t word = target.GetAddressByteSize();
  const cbf::WordSize ws = word == 2 ? cbf::WordSize::Bits16
                           : word == 4 ? cbf::WordSize::Bits32
                                       : cbf::WordSize::Bits64;
  auto bytes = cbf::encode(ws, runs);
  if (!bytes) return usage_error(result, bytes.error().to_string());
  const bool base64 = args.has("base64");
  const std::string path = args.has("output") ? args.get("output") : std::string();
  if (!path.empty()) {
    std::ofstream file(path, std::ios::binary);
    if (base64) file << cbf::to_base64(*bytes) << '\n';
    else file.write(reinterpret_cast<const char*>(bytes->data()),
                    static_cast<std::streamsize>(bytes->size()));
    if (!file.flush()) return usage_error(result, "cannot write " + path);
  }
  print(result, cbf::encode_text(runs, ws, *bytes, {thread.GetIndexID(), !base64, base64, path}));
  return true;
}

void register_cbf_commands(lldb::SBCommand root, Installer& installer) {
  lldb::SBCommand cbf = root.AddMultiwordCommand(
      "cbf", "Swift Compact Backtrace Format: decode from memory, encode a thread's backtrace.");
  cbf.AddCommand("decode", new CbfDecodeCommand(installer),
                 "Decode the CBF record at ADDR (a number or expression) from process or core "
                 "memory; each frame symbolized. Without LEN one record is read (up to 64 KiB, "
                 "less at the end of a mapping); with LEN every record in LEN bytes.",
                 "unwindkit cbf decode <address> [<length>]", "");
  cbf.AddCommand("encode", new CbfEncodeCommand(installer),
                 "Encode a thread's backtrace as CBF: hex (or base64) or a file (raw bytes, or "
                 "base64 text), and its size next to the plain size (a word per frame).",
                 "unwindkit cbf encode [-t <thread-index>] [-o <file>] [--base64]", "");
}

}  // namespace unwindkit::lldb_plugin
