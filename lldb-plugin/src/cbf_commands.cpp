// `unwindkit cbf ...` (see cbf_commands.h). The output matches the GDB plugin's line for line.
#include "cbf_commands.h"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "unwindkit/cbf/decode.h"
#include "unwindkit/cbf/encode.h"
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

// `0x... in name+off (module) at file:line`. A return address is looked up at addr - 1 (the
// call), as `bt` does, so a call that ends its function still names the caller.
std::string describe_address(lldb::SBTarget target, uint64_t addr, cbf::FrameKind kind) {
  const uint64_t lookup = kind == cbf::FrameKind::ReturnAddress && addr > 0 ? addr - 1 : addr;
  std::string text = fmt::format("{:#018x}", addr);
  lldb::SBAddress where = target.ResolveLoadAddress(lookup);
  lldb::SBSymbolContext sc =
      target.ResolveSymbolContextForAddress(where, lldb::eSymbolContextEverything);
  lldb::SBSymbol symbol = sc.GetSymbol();
  const uint64_t start = symbol.IsValid() ? symbol.GetStartAddress().GetLoadAddress(target)
                                          : LLDB_INVALID_ADDRESS;
  if (symbol.IsValid() && symbol.GetName() != nullptr && start != LLDB_INVALID_ADDRESS)
    text += fmt::format(" in {}+{} ({})", symbol.GetName(), addr - start,
                        base_name(sc.GetModule().GetFileSpec().GetFilename()));
  else
    text += " in ??";
  lldb::SBLineEntry line = sc.GetLineEntry();
  if (line.IsValid() && line.GetLine() != 0 && line.GetFileSpec().GetFilename() != nullptr)
    text += fmt::format(" at {}:{}", line.GetFileSpec().GetFilename(), line.GetLine());
  return text;
}

// One line per run of equal frames: `#N kind address ...`, `#N-#M` for a repeat.
std::string format_record(lldb::SBTarget target, const cbf::Backtrace& bt) {
  std::string out = fmt::format("CBF record: {}-bit, {} frames, {} bytes\n",
                                cbf::word_bytes(bt.word_size) * 8, cbf::frame_count(bt),
                                bt.encoded_size);
  uint64_t index = 0;
  for (const cbf::Run& run : bt.runs) {
    const std::string label = run.count == 1 ? fmt::format("#{}", index)
                                             : fmt::format("#{}-#{}", index, index + run.count - 1);
    std::string body;
    if (run.frame.kind == cbf::FrameKind::Omitted)
      body = fmt::format("{} frames omitted", run.frame.value);
    else if (run.frame.kind != cbf::FrameKind::Truncated)
      body = describe_address(target, run.frame.value, run.frame.kind);
    if (run.count > 1) body += fmt::format(" (x{})", run.count);
    std::string line = fmt::format("{:<8} {:<9} {}", label, cbf::kind_name(run.frame.kind), body);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
    index += run.count;
  }
  if (bt.problem) out += "problem: " + bt.problem->to_string() + "\n";
  return out;
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
  std::string out;
  uint64_t offset = 0;
  for (const auto& rec : records) {
    if (!rec) {
      print(result, out);
      return usage_error(result, fmt::format("at {:#x}: {} (not a CBF record)", *addr + offset,
                                             rec.error().to_string()));
    }
    if (records.size() > 1) out += fmt::format("at {:#x}: ", *addr + offset);
    out += format_record(target, *rec);
    offset += rec->encoded_size;
  }
  print(result, out);
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
  uint64_t addresses = 0;
  for (uint32_t i = 0; i < thread.GetNumFrames(); ++i) {
    lldb::SBFrame frame = thread.GetFrameAtIndex(i);
    if (frame.IsInlined() || frame.IsArtificial()) continue;
    cbf::append(runs, cbf::Frame{addresses == 0 ? cbf::FrameKind::ProgramCounter
                                                : cbf::FrameKind::ReturnAddress,
                                 frame.GetPC()});
    ++addresses;
  }
  const uint32_t word = target.GetAddressByteSize();
  const cbf::WordSize ws = word == 2 ? cbf::WordSize::Bits16
                           : word == 4 ? cbf::WordSize::Bits32
                                       : cbf::WordSize::Bits64;
  auto bytes = cbf::encode(ws, runs);
  if (!bytes) return usage_error(result, bytes.error().to_string());
  const bool base64 = args.has("base64");
  const std::string text = base64 ? cbf::to_base64(*bytes) : cbf::to_hex(*bytes);
  std::string out = fmt::format("thread {}: {} frames\n", thread.GetIndexID(), addresses);
  if (args.has("output")) {
    const std::string path = args.get("output");
    std::ofstream file(path, std::ios::binary);
    if (base64) file << text << '\n';
    else file.write(reinterpret_cast<const char*>(bytes->data()),
                    static_cast<std::streamsize>(bytes->size()));
    if (!file.flush()) return usage_error(result, "cannot write " + path);
    out += "wrote " + path + "\n";
  } else {
    out += fmt::format("{}: {}\n", base64 ? "base64" : "hex", text);
  }
  out += fmt::format("size: {} bytes (plain: {} bytes)\n", bytes->size(), addresses * word);
  print(result, out);
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
