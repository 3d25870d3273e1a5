#include "cfi_entries.h"

#include <dwarf.h>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

namespace unwindkit::dwarf {

namespace {

constexpr uint64_t kNoValue = std::numeric_limits<uint64_t>::max();
// libdw refuses registers from here on itself (enough_registers: INT32_MAX / sizeof(rule)).
constexpr uint64_t kLibdwRefuses = std::numeric_limits<int32_t>::max() / 8;
// Registers libdw's own instructions name: AArch64's RA_SIGN_STATE, SPARC's register window.
constexpr uint64_t kLibdwOwnRegisters = 34;
constexpr uint8_t kPrimaryMask = 0xc0, kOperandMask = 0x3f;
constexpr uint8_t kApplyMask = 0x70, kSizeMask = 0x07;
constexpr unsigned kMaxLebBytes = 10;

// libdw's get_uleb128/get_sleb128: at most 10 bytes, none at `end`; kNoValue for a number
// they leave unterminated.
uint64_t leb(Bytes d, size_t& pos, size_t end, bool is_signed = false) {
  uint64_t value = 0;
  for (unsigned i = 0; i < kMaxLebBytes && pos < end; ++i) {
    const uint8_t b = d[pos++];
    value |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      const unsigned bits = 7 * (i + 1);
      if (is_signed && bits < 64 && (b & 0x40) != 0) value |= ~uint64_t{0} << bits;
      return value;
    }
  }
  return kNoValue;
}

// An error inside a CIE's or FDE's program, saying whose.
Error in_entry(std::string_view kind, uint64_t offset, Error e) {
  e.message = fmt::format("{} at {:#x}: {}", kind, offset, e.message);
  return e;
}

}  // namespace

size_t encoded_value_size(Bytes d, size_t pos, uint8_t encoding, bool is_64) {
  if (encoding == DW_EH_PE_omit) return 0;
  switch (encoding & kSizeMask) {
    case DW_EH_PE_udata2: return 2;
    case DW_EH_PE_udata4: return 4;
    case DW_EH_PE_udata8: return 8;
    case DW_EH_PE_absptr: return is_64 ? 8 : 4;
    case DW_EH_PE_uleb128:
      for (size_t at = pos; at < d.size();)
        if ((d[at++] & 0x80) != 0) return at - pos;
      return 0;
    default: return 0;
  }
}

std::optional<uint64_t> read_other_encoded(const CfiData& cfi, uint8_t encoding, size_t& pos,
                                           uint64_t datarel) {
  const Bytes d = cfi.data;
  const ByteReader r(d, cfi.endian, cfi.name);
  const size_t address_size = cfi.is_64 ? 8 : 4;
  uint64_t base = 0;
  switch (encoding & kApplyMask) {
    case DW_EH_PE_absptr: case DW_EH_PE_textrel: case DW_EH_PE_funcrel: break;
    case DW_EH_PE_pcrel: base = cfi.address + pos; break;
    case DW_EH_PE_datarel: base = datarel; break;
    case DW_EH_PE_aligned: {
      const size_t size = encoded_value_size(d, pos, encoding, cfi.is_64);
      if (size == 0) return std::nullopt;
      const size_t misalign = (cfi.address + pos) & (size - 1);
      if (misalign != 0) pos += size - misalign;
      break;
    }
    default: return std::nullopt;
  }
  const auto fixed = [&](size_t width) -> std::optional<uint64_t> {
    if (!r.holds(pos, width)) return std::nullopt;
    pos += width;
    return r.uint_in(pos - width, width);
  };
  std::optional<uint64_t> value;
  switch (encoding & kFormatMask) {
    case DW_EH_PE_udata2: value = fixed(2); break;
    case DW_EH_PE_sdata2:
      value = fixed(2);
      if (value) value = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(*value)));
      break;
    case DW_EH_PE_udata4: value = fixed(4); break;
    case DW_EH_PE_sdata4:
      value = fixed(4);
      if (value) value = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(*value)));
      break;
    case DW_EH_PE_udata8: case DW_EH_PE_sdata8: value = fixed(8); break;
    case DW_EH_PE_absptr: value = fixed(address_size); break;
    case DW_EH_PE_uleb128: value = leb(d, pos, d.size()); break;
    case DW_EH_PE_sleb128: value = leb(d, pos, d.size(), true); break;
    default: return std::nullopt;
  }
  if (!value) return std::nullopt;
  uint64_t result = base + *value;
  if ((encoding & DW_EH_PE_indirect) != 0) {
    if (result < cfi.address) return std::nullopt;
    result -= cfi.address;
    if (!r.holds(result, address_size)) return std::nullopt;
    result = r.uint_in(result, address_size);
  }
  return result;
}

namespace {

struct Program {
  uint64_t bytes = 0;
  uint64_t rows = 1;
  uint64_t registers = 0;  // the highest register named
  uint64_t remembers = 0;
};

std::string_view op_name(uint8_t op) {
  switch (op) {
    case DW_CFA_offset_extended: return "DW_CFA_offset_extended";
    case DW_CFA_restore_extended: return "DW_CFA_restore_extended";
    case DW_CFA_undefined: return "DW_CFA_undefined";
    case DW_CFA_same_value: return "DW_CFA_same_value";
    case DW_CFA_register: return "DW_CFA_register";
    case DW_CFA_expression: return "DW_CFA_expression";
    case DW_CFA_offset_extended_sf: return "DW_CFA_offset_extended_sf";
    case DW_CFA_val_offset: return "DW_CFA_val_offset";
    case DW_CFA_val_offset_sf: return "DW_CFA_val_offset_sf";
    case DW_CFA_val_expression: return "DW_CFA_val_expression";
    case DW_CFA_GNU_negative_offset_extended: return "DW_CFA_GNU_negative_offset_extended";
    default: return "DW_CFA";
  }
}

// A program [pos, end) of `cfi` read as libdw's execute_cfi runs it, to its end or the first
// instruction libdw fails on (nothing after that runs). `loc` is DW_CFA_set_loc's encoding.
Result<Program> read_program(const CfiData& cfi, size_t pos, size_t end, uint8_t loc) {
  const Bytes d = cfi.data;
  end = std::min(end, d.size());
  Program out;
  out.bytes = pos < end ? end - pos : 0;
  uint64_t depth = 0;
  size_t at = pos;
  // libdw gives a register its rule only after reading every operand.
  const auto named = [&](uint8_t op, uint64_t reg) -> Result<bool> {
    if (reg >= kLibdwRefuses) return false;  // libdw fails here, having allocated nothing
    if (reg > kMaxCfiRegister)
      return fail(cfi.name, at, op_name(op),
                  fmt::format("register {} is over {}: libdw would keep {} register rules for "
                              "every lookup",
                              reg, kMaxCfiRegister, reg + 1));
    out.registers = std::max(out.registers, reg);
    return true;
  };
  for (size_t p = pos; p < end;) {
    at = p;
    const uint8_t op = d[p++];
    uint64_t reg = 0;
    switch (op & kPrimaryMask) {
      case DW_CFA_advance_loc: ++out.rows; continue;
      case DW_CFA_offset:
        leb(d, p, end);
        out.registers = std::max<uint64_t>(out.registers, op & kOperandMask);
        continue;
      case DW_CFA_restore:
        out.registers = std::max<uint64_t>(out.registers, op & kOperandMask);
        continue;
      default: break;
    }
    bool runs = true;  // whether libdw goes on past this instruction
    switch (op) {
      case DW_CFA_nop: break;
      case DW_CFA_set_loc:
        runs = read_encoded(cfi, loc, p).has_value();
        ++out.rows;
        break;
      case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4:
      case DW_CFA_MIPS_advance_loc8: {
        const size_t n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2
                         : op == DW_CFA_advance_loc4 ? 4 : 8;
        runs = n <= end - p;
        p += runs ? n : 0;
        ++out.rows;
        break;
      }
      case DW_CFA_def_cfa: case DW_CFA_def_cfa_sf:
        leb(d, p, end);
        runs = p < end;
        if (runs) leb(d, p, end);
        break;
      case DW_CFA_def_cfa_register: case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
      case DW_CFA_GNU_args_size:
        leb(d, p, end);
        break;
      case DW_CFA_def_cfa_expression: {
        const uint64_t n = leb(d, p, end);
        runs = n <= end - p;
        p += runs ? n : 0;
        break;
      }
      case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value: {
        reg = leb(d, p, end);
        auto r = named(op, reg);
        if (!r) return tl::unexpected(r.error());
        runs = *r;
        break;
      }
      case DW_CFA_offset_extended: case DW_CFA_offset_extended_sf: case DW_CFA_val_offset:
      case DW_CFA_val_offset_sf: case DW_CFA_register: case DW_CFA_GNU_negative_offset_extended: {
        reg = leb(d, p, end);
        runs = p < end;
        if (!runs) break;
        leb(d, p, end);
        auto r = named(op, reg);
        if (!r) return tl::unexpected(r.error());
        runs = *r;
        break;
      }
      case DW_CFA_expression: case DW_CFA_val_expression: {
        reg = leb(d, p, end);
        runs = p < end;
        if (!runs) break;
        const uint64_t n = leb(d, p, end);
        runs = n <= end - p;
        if (!runs) break;
        p += n;
        auto r = named(op, reg);
        if (!r) return tl::unexpected(r.error());
        runs = *r;
        break;
      }
      case DW_CFA_remember_state:
        ++out.remembers;
        if (++depth > kMaxRememberDepth)
          return fail(cfi.name, at, "DW_CFA_remember_state",
                      fmt::format("nests states over {} deep: libdw copies every register rule "
                                  "for each",
                                  kMaxRememberDepth));
        break;
      case DW_CFA_restore_state:
        runs = depth > 0;
        depth -= runs ? 1 : 0;
        break;
      case DW_CFA_GNU_window_save:
        out.registers = std::max(out.registers, kLibdwOwnRegisters);
        break;
      default: runs = false;  // an instruction libdw does not know
    }
    if (!runs) break;
  }
  return out;
}

// `cie` as dwarf_next_cfi read it from `section`, its augmentation as libdw's intern_new_cie
// reads it.
CieLayout cie_layout(const Dwarf_CIE& cie, Bytes section, bool is_64) {
  CieLayout out;
  out.fde_encoding = DW_EH_PE_absptr;
  const std::string_view aug = cie.augmentation ? cie.augmentation : "";
  out.sized = !aug.empty() && aug[0] == 'z';
  // Without 'z' libdw reads no augmentation data: 'L', 'R' and 'P' then change nothing.
  const uint8_t* data = cie.augmentation_data;
  if (out.sized && data && data >= section.data() && data <= section.data() + section.size()) {
    size_t pos = static_cast<size_t>(data - section.data());
    const size_t limit = pos + cie.augmentation_data_size;
    for (char c : aug.substr(1)) {
      if (c != 'R' && c != 'L' && c != 'P') continue;  // 'S', 'B' and unknown letters: no data
      if (pos >= limit || pos >= section.size()) break;  // libdw refuses the CIE
      const uint8_t enc = section[pos++];
      if (c == 'R') out.fde_encoding = enc;
      // (A ULEB128 personality is sized to the section's end, as libdw sizes it.)
      if (c == 'P') pos += encoded_value_size(section, pos, enc, is_64);
    }
  }
  if ((out.fde_encoding & kFormatMask) == DW_EH_PE_absptr)
    out.fde_encoding |= is_64 ? DW_EH_PE_udata8 : DW_EH_PE_udata4;
  return out;
}

}  // namespace

CfiEntries::CfiEntries(const CfiData& cfi) : cfi_(cfi) {
  ident_[EI_CLASS] = cfi.is_64 ? ELFCLASS64 : ELFCLASS32;
  ident_[EI_DATA] = cfi.endian == Endian::Little ? ELFDATA2LSB : ELFDATA2MSB;
  data_.d_buf = const_cast<uint8_t*>(cfi.data.data());
  data_.d_size = cfi.data.size();
  data_.d_type = ELF_T_BYTE;
}

int CfiEntries::next(uint64_t offset, uint64_t* following, Dwarf_CFI_Entry* entry) {
  *following = offset;
  if (offset >= cfi_.data.size()) return 1;
  Dwarf_Off n = offset;
  const int rc = dwarf_next_cfi(ident_, &data_, cfi_.eh, offset, &n, entry);
  *following = n;
  return rc;
}

Result<const CfiEntries::Cie*> CfiEntries::cie_of(const Dwarf_FDE& fde) {
  auto found = last_cie_ != cies_.end() && last_cie_->first == fde.CIE_pointer
                   ? last_cie_
                   : cies_.find(fde.CIE_pointer);
  if (found == cies_.end()) {
    std::optional<Cie> cie;
    uint64_t following = 0;
    Dwarf_CFI_Entry entry{};
    if (next(fde.CIE_pointer, &following, &entry) == 0 && dwarf_cfi_cie_p(&entry)) {
      const CieLayout layout = cie_layout(entry.cie, cfi_.data, cfi_.is_64);
      auto program = read_program(cfi_, pos_of(entry.cie.initial_instructions),
                                  pos_of(entry.cie.initial_instructions_end), layout.fde_encoding);
      if (!program) return tl::unexpected(in_entry("CIE", fde.CIE_pointer, program.error()));
      cie = Cie{layout, program->registers};
    }
    found = cies_.emplace(fde.CIE_pointer, cie).first;
  }
  last_cie_ = found;  // an FDE's CIE is most often the one before's
  return found->second ? &*found->second : nullptr;
}

Result<Result<CfiEntries::Head>> CfiEntries::head(const Dwarf_FDE& fde, uint64_t offset) {
  const auto unusable = [&](uint64_t at, std::string_view field, std::string message) {
    return Result<Result<Head>>(Result<Head>(fail(cfi_.name, at, field, std::move(message))));
  };
  const auto found = cie_of(fde);
  if (!found) return tl::unexpected(found.error());
  if (*found == nullptr) return unusable(offset, "CIE_pointer", "no CIE at this offset");
  const Cie& cie = **found;
  // intern_fde: initial_location and address_range, then a sized block or nothing.
  size_t pos = pos_of(fde.start);
  const size_t end = pos_of(fde.end);
  const size_t field = pos;
  const auto extent = extent_of(cie, pos);
  if (!extent)
    return unusable(field, "initial_location",
                    fmt::format("pointer encoding {:#04x} is not read", cie.layout.fde_encoding));
  if (cie.layout.sized) {
    const size_t block = pos;
    const uint64_t n = pos < end ? leb(cfi_.data, pos, end) : kNoValue;
    if (pos > end || n > end - pos)
      return unusable(block, "augmentation data", "runs past the entry");
    pos += n;
  }
  return Result<Head>(Head{extent->first, extent->second, pos, end, &cie});
}


Result<Result<Fde>> CfiEntries::fde(const Dwarf_FDE& fde, uint64_t offset) {
  auto read = head(fde, offset);
  if (!read) return tl::unexpected(read.error());
  if (!*read) return Result<Fde>(tl::unexpected(read->error()));
  const Head& h = **read;
  auto program = read_program(cfi_, h.program, h.end, h.cie->layout.fde_encoding);
  if (!program) return tl::unexpected(in_entry("FDE", offset, program.error()));
  const uint64_t registers =
      std::max({h.cie->registers, program->registers, kLibdwOwnRegisters}) + 1;
  return Result<Fde>(Fde{h.start, h.range,
                         {program->bytes + (program->remembers + 1) * registers, program->rows}});
}

Result<void> CfiEntries::check(std::span<const uint64_t> table) {
  std::vector<uint64_t> chain;  // its FDEs' offsets, ascending
  for (uint64_t off = 0;;) {
    uint64_t following = 0;
    Dwarf_CFI_Entry entry{};
    const int rc = next(off, &following, &entry);
    if (rc > 0) break;
    if (rc == 0 && !dwarf_cfi_cie_p(&entry)) {
      if (!table.empty()) chain.push_back(off);
      if (auto f = fde(entry.fde, off); !f) return tl::unexpected(f.error());
    }
    // libdw's search skips an entry it cannot read if it can tell where the next starts.
    if (following <= off) break;
    off = following;
  }
  if (table.empty()) return {};
  // A bit per byte of the chain's extent, set where an FDE starts: the table's offsets are
  // in address order, not the section's.
  constexpr size_t kBits = 64;
  std::vector<uint64_t> starts(chain.empty() ? 0 : chain.back() / kBits + 1);
  for (uint64_t off : chain) starts[off / kBits] |= uint64_t{1} << (off % kBits);
  for (uint64_t off : table) {
    if (off / kBits < starts.size() && (starts[off / kBits] >> (off % kBits) & 1) != 0) continue;
    if (auto read = check_at(off); !read) return tl::unexpected(read.error());
  }
  return {};
}

std::optional<std::pair<uint64_t, uint64_t>> CfiEntries::extent_at(uint64_t offset) {
  uint64_t following = 0;
  Dwarf_CFI_Entry entry{};
  if (next(offset, &following, &entry) != 0 || dwarf_cfi_cie_p(&entry)) return std::nullopt;
  const auto cie = cie_of(entry.fde);
  if (!cie || *cie == nullptr) return std::nullopt;
  size_t pos = pos_of(entry.fde.start);
  return extent_of(**cie, pos);  // head()'s first two reads, and nothing after them
}

Result<std::optional<Fde>> CfiEntries::check_at(uint64_t offset) {
  uint64_t following = 0;
  Dwarf_CFI_Entry entry{};
  if (next(offset, &following, &entry) != 0 || dwarf_cfi_cie_p(&entry)) return std::nullopt;
  auto f = fde(entry.fde, offset);
  if (!f) return tl::unexpected(f.error());
  if (!*f) return std::nullopt;
  return std::optional<Fde>(**f);
}

}  // namespace unwindkit::dwarf
