// `unwindkit bt` and `unwindkit regs` (see walk_commands.h).
#include "walk_commands.h"

#include <fmt/format.h>

#include "unwindkit/unwind/bt_report.h"
#include "walk.h"

namespace unwindkit::lldb_plugin {
namespace {

constexpr OptionSpec kThreadOption{'t', "thread", true};
constexpr OptionSpec kBtOptions[] = {kThreadOption, {'c', "count", true}};
constexpr OptionSpec kRegsOptions[] = {kThreadOption};
constexpr size_t kDefaultMaxFrames = 100000;

// The thread named by -t (LLDB's thread index, as in `thread list`), else the selected one.
bool pick_thread(lldb::SBDebugger debugger, const ParsedArgs& args, lldb::SBThread& thread,
                 std::string& error) {
  lldb::SBProcess process = debugger.GetSelectedTarget().GetProcess();
  if (!process.IsValid()) {
    error = "no process: load a core or run the program first";
    return false;
  }
  if (!args.has("thread")) {
    thread = process.GetSelectedThread();
    return true;
  }
  uint64_t index = 0;
  if (!parse_number(args.get("thread"), index)) {
    error = "bad thread index '" + args.get("thread") + "'";
    return false;
  }
  thread = process.GetThreadByIndexID(static_cast<uint32_t>(index));
  if (!thread.IsValid()) error = fmt::format("no thread with index {}", index);
  return thread.IsValid();
}

// LLDB's name for the function holding a frame's lookup address, with the offset from the pc.
std::optional<unwind::SymbolHit> lldb_name(lldb::SBTarget target, const unwind::Frame& frame) {
  lldb::SBSymbol symbol = target.ResolveLoadAddress(frame.address.lookup_address()).GetSymbol();
  if (!symbol.IsValid() || symbol.GetName() == nullptr) return std::nullopt;
  return unwind::SymbolHit{symbol.GetName(), frame.pc() - symbol.GetStartAddress().GetLoadAddress(target)};
}

}  // namespace

bool BacktraceCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kBtOptions);
  if (!args.error.empty() || !args.positional.empty())
    return usage_error(result, args.error.empty() ? "unexpected argument" : args.error);
  uint64_t count = kDefaultMaxFrames;
  if (args.has("count") && !parse_number(args.get("count"), count))
    return usage_error(result, "bad frame count '" + args.get("count") + "'");
  lldb::SBThread thread;
  std::string error;
  if (!pick_thread(debugger, args, thread, error)) return usage_error(result, error);
  unwind::ModuleMap modules;
  unwind::Walk walk = walk_thread(installer_, thread, count, modules);
  lldb::SBTarget target = thread.GetProcess().GetTarget();
  std::vector<std::optional<unwind::SymbolHit>> names;
  for (const unwind::Frame& f : walk.frames) names.push_back(lldb_name(target, f));
  print(result, fmt::format("* thread #{} (unwindkit)\n{}", thread.GetIndexID(),
                            unwind::bt_text(walk, names)));
  return true;
}

bool RegistersCommand::run(lldb::SBDebugger debugger, char** argv, lldb::SBCommandReturnObject& result) {
  ParsedArgs args = parse_args(argv, kRegsOptions);
  uint64_t n = 0;
  if (!args.error.empty() || args.positional.size() != 1 || !parse_number(args.positional[0], n))
    return usage_error(result, args.error.empty() ? "expected a frame number" : args.error);
  lldb::SBThread thread;
  std::string error;
  if (!pick_thread(debugger, args, thread, error)) return usage_error(result, error);
  unwind::ModuleMap modules;
  unwind::Walk walk = walk_thread(installer_, thread, n + 1, modules);
  if (walk.frames.size() <= n)
    return usage_error(result, fmt::format("the walk has {} frames ({})", walk.frames.size(),
                                           walk.stop_reason));
  const RegisterSet& regs = walk.frames[n].regs;
  std::string out = fmt::format("frame #{} (unwindkit):\n", n);
  // The pc is printed once, last, under LLDB's name for it (x86_64's return-address column is
  // rip itself).
  const ArchInfo& arch = arch_info(regs.arch());
  for (const RegisterInfo& r : general_registers(regs.arch())) {
    if (r.lldb_name == arch.lldb_pc_name) continue;
    if (auto v = regs.get(r.dwarf)) out += fmt::format("  {:>6} = 0x{:016x}\n", r.name, *v);
  }
  out += fmt::format("  {:>6} = 0x{:016x}\n", arch.lldb_pc_name, regs.pc().value_or(0));
  print(result, out);
  return true;
}

}  // namespace unwindkit::lldb_plugin
