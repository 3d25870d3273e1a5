// CIEs and FDEs read as libdw reads them, and what running their programs costs libdw.
//
// libdw runs an FDE's program (from its CIE's initial state) afresh for every lookup. It
// keeps one rule per register up to the highest register the program names, growing and
// clearing that array on the way (it allows 2^28 registers: 2 GB), and copies the whole array
// at every DW_CFA_remember_state. One hostile FDE could so cost seconds and gigabytes a
// lookup, and a conversion (sframe::from_cfi) looks up every row. CfiTables therefore reads
// every program before libdw may run it, and refuses CFI past the bounds below; from_cfi
// weighs each function's rows before it converts them.
//
// The readers follow libdw 0.188 (cie.c, fde.c, cfi.c) where CFI is malformed: a program
// is read as far as libdw would run it, so nothing libdw runs goes unread.
#pragma once

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"

namespace unwindkit::dwarf {

// Four times the highest DWARF register number our psABIs give (x86_64's APX r31, 145).
inline constexpr uint64_t kMaxCfiRegister = 1023;
// Compilers nest one or two (an epilogue's state inside the body's).
inline constexpr uint64_t kMaxRememberDepth = 64;

// How a CIE's FDEs are laid out, as libdw's intern_new_cie reads its augmentation.
struct CieLayout {
  uint8_t fde_encoding = 0;  // DW_EH_PE_*; absptr is made udata4/udata8 by the ELF class
  bool sized = false;        // 'z': each FDE has a ULEB128-sized block before its program
};

// What libdw's lookups inside one FDE cost.
struct FdeCost {
  // One lookup: the program's bytes, and the register array copied at its start and at each
  // DW_CFA_remember_state.
  uint64_t lookup = 0;
  // The rows it defines (1 + its location changes): a conversion looks up each.
  uint64_t rows = 1;
};

// A CFI section (`.eh_frame` layout or `.debug_frame`'s) whose data start at `address`.
struct CfiData {
  Bytes data;
  uint64_t address = 0;
  std::string_view name;  // in errors
  bool eh = true;        // else .debug_frame's CIE ids and pointers
  bool is_64 = true;
  Endian endian = Endian::Little;
};

// A pointer encoding's format bits (DW_EH_PE_udata4...), without how it applies (pcrel...).
inline constexpr uint8_t kFormatMask = 0x0f;

// libdw's encoded_value_size: the bytes of a value in `encoding` at `pos` of `d`, by the low
// three bits (sdata4 as udata4), a ULEB128 to its first byte with the top bit set (sic).
size_t encoded_value_size(Bytes d, size_t pos, uint8_t encoding, bool is_64);

// read_encoded() for every encoding but the two below.
std::optional<uint64_t> read_other_encoded(const CfiData& cfi, uint8_t encoding, size_t& pos,
                                           uint64_t datarel);

// libdw's read_encoded_value over `cfi` (pcrel from cfi.address, datarel from `datarel`,
// indirect through cfi's own data), moving `pos` past the value; nullopt where libdw fails.
// What compilers write for FDE addresses and lengths is read here, inline: a module's check
// reads two such values from each of its FDEs, a million of them in a large one.
inline std::optional<uint64_t> read_encoded(const CfiData& cfi, uint8_t encoding, size_t& pos,
                                            uint64_t datarel = 0) {
  constexpr size_t kWidth = 4;
  const bool pcrel = encoding == (DW_EH_PE_pcrel | DW_EH_PE_sdata4);
  if ((!pcrel && encoding != DW_EH_PE_sdata4) || pos > cfi.data.size() ||
      cfi.data.size() - pos < kWidth)
    return read_other_encoded(cfi, encoding, pos, datarel);
  const ByteReader r(cfi.data, cfi.endian, cfi.name);
  const uint64_t base = pcrel ? cfi.address + pos : 0;
  pos += kWidth;
  return base + static_cast<uint64_t>(r.sint_in(pos - kWidth, kWidth));
}

// An FDE as libdw's intern_fde reads it.
struct Fde {
  uint64_t start = 0;  // initial_location, its encoding applied
  uint64_t range = 0;  // address_range
  FdeCost cost;
};

class CfiEntries {
 public:
  explicit CfiEntries(const CfiData& cfi);
  CfiEntries(const CfiEntries&) = delete;  // last_cie_ points into cies_
  CfiEntries& operator=(const CfiEntries&) = delete;

  // dwarf_next_cfi at `offset`: 0 an entry, 1 the end, -1 an error; `following` is where
  // the next entry starts, if libdw could tell.
  int next(uint64_t offset, uint64_t* following, Dwarf_CFI_Entry* entry);

  // The FDE dwarf_next_cfi read at `offset`, with its CIE found as libdw finds it. The outer
  // error names an instruction past a bound; the inner one why libdw cannot use the FDE.
  Result<Result<Fde>> fde(const Dwarf_FDE& fde, uint64_t offset);

  // Every program libdw may run for a lookup: the FDEs along the chain of entries (its search
  // without a table) and those at `table` offsets (an .eh_frame_hdr search table's, in any
  // order).
  Result<void> check(std::span<const uint64_t> table);
  // The program of the FDE a search table leads libdw to (__libdw_fde_by_offset), and its
  // CIE's; the FDE, or nullopt where libdw reads none there or cannot use the one it reads.
  Result<std::optional<Fde>> check_at(uint64_t offset);
  // The initial location and address range of the FDE at `offset` where libdw reads one
  // there with a CIE it can use, and can read those two; what follows them (the
  // augmentation data, the program) is not read, nor checked.
  std::optional<std::pair<uint64_t, uint64_t>> extent_at(uint64_t offset);

 private:
  struct Cie {
    CieLayout layout;
    uint64_t registers = 0;  // the highest register its program names
  };
  // An FDE up to its program: its extent, where its program lies, and its CIE (read first).
  struct Head {
    uint64_t start = 0, range = 0;
    size_t program = 0, end = 0;
    const Cie* cie = nullptr;
  };
  Result<Result<Head>> head(const Dwarf_FDE& fde, uint64_t offset);
  // The CIE of `fde` as libdw finds it, read once (nullptr: libdw cannot use it); the error
  // names an instruction of its program past a bound.
  Result<const Cie*> cie_of(const Dwarf_FDE& fde);
  // An FDE's initial location and address range at `pos` (moved past them), as intern_fde
  // reads them with its CIE's encoding; nullopt where libdw cannot. Inline: a module's check
  // reads a million.
  [[gnu::always_inline]] std::optional<std::pair<uint64_t, uint64_t>> extent_of(const Cie& cie,
                                                                               size_t& pos) {
    const auto start = read_encoded(cfi_, cie.layout.fde_encoding, pos);
    const auto range = start ? read_encoded(cfi_, cie.layout.fde_encoding & kFormatMask, pos)
                             : std::nullopt;
    if (!range) return std::nullopt;
    return std::pair{*start, *range};
  }
  size_t pos_of(const uint8_t* p) const { return static_cast<size_t>(p - cfi_.data.data()); }

  CfiData cfi_;
  unsigned char ident_[EI_NIDENT]{};
  Elf_Data data_{};
  std::map<uint64_t, std::optional<Cie>> cies_;  // by offset; nullopt: libdw cannot use it
  std::map<uint64_t, std::optional<Cie>>::iterator last_cie_ = cies_.end();
};

// An .eh_frame_hdr search table of (initial location, FDE address) pairs, datarel sdata4 (what
// linkers write), each at `address` + its value.
struct SearchTable {
  static constexpr size_t kPairBytes = 8;
  Bytes pairs;
  uint64_t address = 0;  // the header's
  size_t entries() const { return pairs.size() / kPairBytes; }
};

// Each `.eh_frame` libdw's dwarf_getcfi_elf may read in `elf` (sections named .eh_frame, else
// what PT_GNU_EH_FRAME points at, to the end of the file).
struct EhFrame {
  CfiData cfi;
  // Set where every libdw finds this .eh_frame's FDEs through this table alone: the file has
  // one .eh_frame and one .eh_frame_hdr, listed before it, naming it, its table inside it.
  // A lookup then runs only the FDE searched_fde() names.
  std::optional<SearchTable> search;
  // Otherwise the offsets of the FDEs the search tables of .eh_frame_hdr name in it.
  std::vector<uint64_t> table;
};
std::vector<EhFrame> eh_frames_as_libdw(Elf* elf);

// libdw's binary_search_fde: the table entry it stops at for `address` and the offset in
// `frame` of the FDE that entry names; nullopt for none (libdw then runs no program).
struct SearchHit {
  size_t entry = 0;
  uint64_t offset = 0;
};
std::optional<SearchHit> searched_fde(const EhFrame& frame, uint64_t address);
// Whether `frame`'s search table lists initial locations that never decrease (what linkers
// write). There searched_fde() stops at the last entry starting at or before the address.
bool search_ascends(const EhFrame& frame);
// searched_fde()'s answer for a table that search_ascends(), searched forward from entry
// `from` (an earlier answer) where `address` is not before that entry's start: in address
// order, each lookup reads an entry or two instead of halving the whole table.
std::optional<SearchHit> searched_fde_from(const EhFrame& frame, uint64_t address, size_t from);

// The `.debug_frame` dwarf_getcfi reads, once dwarf_begin_elf has decompressed it.
std::optional<CfiData> debug_frame_as_libdw(Elf* elf);

}  // namespace unwindkit::dwarf
