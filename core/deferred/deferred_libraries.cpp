// Capstone and libdw, loaded on first use instead of with the plugin that links this file.
//
// The plugins use them only to make a side file (the prologue analyzer decodes with Capstone)
// and in the commands that read a module's own CFI (libdw): a session whose side files were
// made before uses neither, nor does a GDB session that only learns a module has no `.sframe`.
// Linked as usual, they were loaded by every `plugin load` and every import of GDB's
// extension, and Capstone alone has 77,000 relocations of its decoder tables:
// - GDB (which links libdw itself): the extension's import took 10.5-10.7 ms with Capstone
//   and 2.3-2.5 ms without (6 runs each, one CPU);
// - LLDB, where every symbol a library binds is looked up through liblldb's, LLVM's and
//   Clang's tables: Capstone 1.2 ms of CPU, libdw with libbz2 0.35 ms, of a session that the
//   debugger alone runs in 250 ms.
//
// Each function the core calls is defined here with the library's own prototype (from its
// header: a mismatch does not compile) and calls the library's function, loaded on its first
// call with the soname the build linked against (CMake, from the library file). Each plugin
// exports only its entry point (its exports.map), so these stay private to it and the core it
// holds binds to them. Should the library not load, a call fails as the library reports a
// failure: the analyzer and the CFI reader turn that into an error value like any other.
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <elfutils/libdw.h>

namespace {

void* capstone() {
  static void* const library = ::dlopen(UNWINDKIT_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
  return library;
}

void* libdw() {
  static void* const library = ::dlopen(UNWINDKIT_LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
  return library;
}

// The library's own definition of the function declared as `Function` (nullptr: not loaded).
template <typename Function>
Function* real(void* library, const char* name) {
  return library == nullptr ? nullptr : reinterpret_cast<Function*>(::dlsym(library, name));
}

constexpr const char* kLibdwMissing = "libdw could not be loaded";

}  // namespace

// The library's `name`, looked up once; `lib` is capstone or libdw.
#define UNWINDKIT_REAL(lib, name) static auto* const loaded = real<decltype(name)>(lib(), #name)

extern "C" {

cs_err cs_open(cs_arch arch, cs_mode mode, csh* handle) {
  UNWINDKIT_REAL(capstone, cs_open);
  return loaded ? loaded(arch, mode, handle) : CS_ERR_MEM;
}

// The functions below take a handle only a successful cs_open gave: the library is loaded.
cs_err cs_close(csh* handle) {
  UNWINDKIT_REAL(capstone, cs_close);
  return loaded(handle);
}

cs_err cs_option(csh handle, cs_opt_type type, size_t value) {
  UNWINDKIT_REAL(capstone, cs_option);
  return loaded(handle, type, value);
}

size_t cs_disasm(csh handle, const uint8_t* code, size_t code_size, uint64_t address, size_t count,
                 cs_insn** insn) {
  UNWINDKIT_REAL(capstone, cs_disasm);
  return loaded(handle, code, code_size, address, count, insn);
}

bool cs_disasm_iter(csh handle, const uint8_t** code, size_t* size, uint64_t* address,
                    cs_insn* insn) {
  UNWINDKIT_REAL(capstone, cs_disasm_iter);
  return loaded(handle, code, size, address, insn);
}

cs_insn* cs_malloc(csh handle) {
  UNWINDKIT_REAL(capstone, cs_malloc);
  return loaded(handle);
}

void cs_free(cs_insn* insn, size_t count) {
  UNWINDKIT_REAL(capstone, cs_free);
  loaded(insn, count);
}

const char* cs_reg_name(csh handle, unsigned int reg_id) {
  UNWINDKIT_REAL(capstone, cs_reg_name);
  return loaded(handle, reg_id);
}

bool cs_insn_group(csh handle, const cs_insn* insn, unsigned int group_id) {
  UNWINDKIT_REAL(capstone, cs_insn_group);
  return loaded(handle, insn, group_id);
}

cs_err cs_regs_access(csh handle, const cs_insn* insn, cs_regs regs_read, uint8_t* regs_read_count,
                      cs_regs regs_write, uint8_t* regs_write_count) {
  UNWINDKIT_REAL(capstone, cs_regs_access);
  return loaded(handle, insn, regs_read, regs_read_count, regs_write, regs_write_count);
}

// libdw: every handle comes from dwarf_begin_elf or dwarf_getcfi_elf, which return NULL (the
// library's failure) when it is not loaded; dwarf_errmsg then says why.
Dwarf* dwarf_begin_elf(Elf* elf, Dwarf_Cmd cmd, Elf_Scn* scngrp) {
  UNWINDKIT_REAL(libdw, dwarf_begin_elf);
  return loaded ? loaded(elf, cmd, scngrp) : nullptr;
}

Dwarf_CFI* dwarf_getcfi_elf(Elf* elf) {
  UNWINDKIT_REAL(libdw, dwarf_getcfi_elf);
  return loaded ? loaded(elf) : nullptr;
}

const char* dwarf_errmsg(int err) {
  UNWINDKIT_REAL(libdw, dwarf_errmsg);
  return loaded ? loaded(err) : kLibdwMissing;
}

Dwarf_CFI* dwarf_getcfi(Dwarf* dwarf) {
  UNWINDKIT_REAL(libdw, dwarf_getcfi);
  return loaded(dwarf);
}

int dwarf_end(Dwarf* dwarf) {
  UNWINDKIT_REAL(libdw, dwarf_end);
  return loaded(dwarf);
}

int dwarf_cfi_end(Dwarf_CFI* cache) {
  UNWINDKIT_REAL(libdw, dwarf_cfi_end);
  return loaded(cache);
}

int dwarf_cfi_addrframe(Dwarf_CFI* cache, Dwarf_Addr address, Dwarf_Frame** frame) {
  UNWINDKIT_REAL(libdw, dwarf_cfi_addrframe);
  return loaded(cache, address, frame);
}

int dwarf_frame_cfa(Dwarf_Frame* frame, Dwarf_Op** ops, size_t* nops) {
  UNWINDKIT_REAL(libdw, dwarf_frame_cfa);
  return loaded(frame, ops, nops);
}

int dwarf_frame_info(Dwarf_Frame* frame, Dwarf_Addr* start, Dwarf_Addr* end, bool* signalp) {
  UNWINDKIT_REAL(libdw, dwarf_frame_info);
  return loaded(frame, start, end, signalp);
}

int dwarf_frame_register(Dwarf_Frame* frame, int regno, Dwarf_Op ops_mem[3], Dwarf_Op** ops,
                         size_t* nops) {
  UNWINDKIT_REAL(libdw, dwarf_frame_register);
  return loaded(frame, regno, ops_mem, ops, nops);
}

}  // extern "C"
