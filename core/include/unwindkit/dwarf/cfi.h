// DWARF call frame information of one ELF file (`.eh_frame`, then `.debug_frame`), read by
// elfutils' libdw and lowered into the rule model (rules.h, source Cfi).
//
// Why libdw and not LLVM's DWARF parser: libdw is a plain C library already linked into the
// core for libelf, small, stable in Debian, and its CFI API answers exactly our question —
// "the frame state at this address" (dwarf_cfi_addrframe), with the psABI's initial register
// rules applied per architecture. LLVM's DWARFDebugFrame would pull in all of libLLVM (and
// a C++ ABI tied to one LLVM release) to get the same rows, leaving us to run the CFA
// programs ourselves.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "unwindkit/bytes.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/error.h"
#include "unwindkit/rules.h"

namespace unwindkit::dwarf {

class CfiTables {
 public:
  // Opens the CFI of `file`, which must outlive the returned object. A file without CFI is
  // not an error (empty() is then true); an ELF whose machine we do not unwind is.
  static Result<CfiTables> open(const elf::ElfFile& file);
  // The CFI of a bare `.eh_frame`-format section found outside ELF (Mach-O `__TEXT,__eh_frame`)
  // whose first byte is at `address`; the bytes are copied. 64-bit x86_64 and AArch64 only
  // (i386 Mach-O numbers esp/ebp differently in its CFI).
  static Result<CfiTables> open_eh_frame(Arch arch, Bytes section, uint64_t address);

  bool empty() const;
  bool has_eh_frame() const;
  bool has_debug_frame() const;

  // The rule at ELF virtual address `address` (unrelocated: subtract the load bias first);
  // nullopt when no FDE covers it. `.eh_frame` is asked first, then `.debug_frame`.
  // func_start/func_end of the rule hold the range of the CFI row (libdw reports the row's
  // range, not the FDE's); the rule is valid throughout it. signal_frame is set for FDEs
  // whose CIE augmentation has 'S'. Expressions beyond the shapes dwarf/lower.h lowers are
  // errors. Every program libdw may run is read before it runs: one that asks libdw more
  // than core/src/dwarf/cfi_entries.h allows is refused with an error naming the
  // instruction. Where libdw finds FDEs through .eh_frame_hdr's table alone, only lookups that
  // would run that program are refused; elsewhere (libdw may then run any) every lookup.
  Result<std::optional<UnwindRule>> lookup(uint64_t address) const;
  // Whether some FDE covers `address`: lookup() would give a rule or an error rather than
  // nullopt. Lowers no rule (a side file asks this of every function a module has).
  bool describes(uint64_t address) const;

  // The CFA rule ld writes for x86_64 lazy PLT entries, which the rule model cannot hold:
  // `rsp + sp_offset`, plus `extra` from byte `from` of each `block`-byte entry on
  // (DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit<block-1>; DW_OP_and; DW_OP_lit<from>; DW_OP_ge;
  // DW_OP_lit<s>; DW_OP_shl; DW_OP_plus, extra = 1 << s). nullopt for any other row.
  struct PltCfa {
    int64_t sp_offset = 0;
    uint32_t block = 0;
    uint32_t from = 0;
    int64_t extra = 0;
  };
  std::optional<PltCfa> plt_cfa(uint64_t address) const;

  CfiTables(CfiTables&&) noexcept;
  CfiTables& operator=(CfiTables&&) noexcept;
  ~CfiTables();

 private:
  struct Impl;
  explicit CfiTables(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace unwindkit::dwarf
