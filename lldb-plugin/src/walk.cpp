// unwindkit's own walk (see walk.h).
#include "walk.h"

namespace unwindkit::lldb_plugin {
namespace {

// Stack from the process; file-backed pages a core lacks from the target's module files.
class LldbMemory : public MemoryReader {
 public:
  LldbMemory(lldb::SBTarget target, lldb::SBProcess process) : target_(target), process_(process) {}
  bool read(uint64_t addr, std::span<uint8_t> out) const override {
    lldb::SBError error;
    if (process_.ReadMemory(addr, out.data(), out.size(), error) == out.size() && error.Success())
      return true;
    lldb::SBAddress address = target_.ResolveLoadAddress(addr);
    return target_.ReadMemory(address, out.data(), out.size(), error) == out.size();
  }

 private:
  mutable lldb::SBTarget target_;
  mutable lldb::SBProcess process_;
};

}  // namespace

namespace {

RegisterSet frame_registers(Arch arch, lldb::SBFrame frame) {
  RegisterSet regs(arch);
  for (const RegisterInfo& r : general_registers(arch)) {
    lldb::SBValue value = frame.FindRegister(std::string(r.lldb_name).c_str());
    if (!value.IsValid()) continue;
    lldb::SBError error;
    uint64_t v = value.GetValueAsUnsigned(error, 0);
    if (error.Success()) regs.set(r.dwarf, v);
  }
  regs.set_pc(frame.GetPC());
  return regs;
}

}  // namespace

std::optional<Arch> target_arch(lldb::SBTarget target) {
  const char* triple = target.GetTriple();
  std::string_view t = triple ? triple : "";
  if (t.starts_with("x86_64")) return Arch::X86_64;
  if (t.starts_with("aarch64") || t.starts_with("arm64")) return Arch::AArch64;
  if (t.starts_with("s390x")) return Arch::S390x;
  return std::nullopt;
}

unwind::Walk walk_thread(Installer& installer, lldb::SBThread thread, size_t max_frames,
                         unwind::ModuleMap& modules) {
  lldb::SBProcess process = thread.GetProcess();
  lldb::SBTarget target = process.GetTarget();
  auto arch = target_arch(target);
  if (!arch) {
    unwind::Walk walk;
    walk.stop_reason = "no unwind info: unsupported architecture";
    return walk;
  }
  for (uint32_t i = 0; i < target.GetNumModules(); ++i)
    if (auto m = installer.core_module(target, target.GetModuleAtIndex(i))) modules.add(std::move(m));
  LldbMemory memory(target, process);
  unwind::WalkOptions options;
  options.max_depth = max_frames;
  options.endian = target.GetByteOrder() == lldb::eByteOrderBig ? Endian::Big : Endian::Little;
  return unwind::walk(frame_registers(*arch, thread.GetFrameAtIndex(0)), modules, memory, options);
}

}  // namespace unwindkit::lldb_plugin
