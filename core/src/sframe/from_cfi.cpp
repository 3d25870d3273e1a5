#include "unwindkit/sframe/from_cfi.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/dwarf/fde_ranges.h"

namespace unwindkit::sframe {

namespace {

// A CFI function has at most this many rows in SFrame (v3 counts FREs in a u16); a row
// that does not advance, or more of them, means a table not worth following.
constexpr size_t kMaxRowsPerFunction = std::numeric_limits<uint16_t>::max();
// What converting one function may ask of libdw (FdeRange::work), which runs the program
// afresh for each row: 16 times what libLLVM 22's largest function asks (about 2 M). Past it
// a long hostile program could take seconds.
constexpr uint64_t kMaxFunctionWork = uint64_t{1} << 25;
// The AMD64 return address is always at CFA-8 (the header's fixed RA offset).
constexpr int8_t kAmd64FixedRa = -8;

// One SFrame row before it is placed: its FRE info bits and data words.
struct RowWords {
  uint8_t info = 0;
  std::vector<int32_t> words;
  // Control words are unsigned bit fields; the rest are signed offsets.
  std::vector<bool> control;
  bool operator==(const RowWords&) const = default;
};

// A reason a row cannot be written, before it is placed at an FDE.
struct Unfit {
  std::string field;
  std::string message;
};

template <class T>
using Fit = tl::expected<T, Unfit>;

tl::unexpected<Unfit> unfit(std::string field, std::string message) {
  return tl::unexpected(Unfit{std::move(field), std::move(message)});
}

bool fits_i32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

// The smallest word size code (0/1/2 = 1/2/4 bytes) that holds every word.
uint8_t size_code(const RowWords& row) {
  uint8_t code = 0;
  for (size_t i = 0; i < row.words.size(); ++i) {
    const int64_t w = row.words[i];
    const bool c = row.control[i];
    const auto need = [&](int64_t lo, int64_t hi) { return w < lo || w > hi; };
    if (c ? need(0, std::numeric_limits<uint8_t>::max()) : need(INT8_MIN, INT8_MAX))
      code = std::max<uint8_t>(code, 1);
    if (c ? need(0, std::numeric_limits<uint16_t>::max()) : need(INT16_MIN, INT16_MAX))
      code = 2;
  }
  return code;
}

class Converter {
 public:
  explicit Converter(Arch arch) : regs_(arch_info(arch)) {}

  // The default-FDE row for `rule`, or why there is none.
  Fit<RowWords> default_row(const UnwindRule& r) const {
    RowWords row;
    if (r.ra.kind == RegRule::Kind::Undefined) return row;  // outermost: no words
    if (r.cfa.kind != CfaRule::Kind::RegOffset || (r.cfa.reg != regs_.sp && r.cfa.reg != regs_.fp))
      return unfit("cfa", fmt::format("CFA is {}, not SP or FP plus an offset", describe(r)));
    if (!fits_i32(r.cfa.offset)) return unfit("cfa", "CFA offset outside i32");
    if (r.cfa.reg == regs_.sp) row.info |= kFreInfoBaseSp;
    add(row, r.cfa.offset, false);
    const bool fp_saved = r.fp.kind == RegRule::Kind::AtCfa;
    if (!fp_saved && r.fp.kind != RegRule::Kind::Unchanged)
      return unfit("fp", fmt::format("FP rule in {} is neither unchanged nor at CFA+offset",
                                     describe(r)));
    if (regs_.arch == Arch::X86_64) {
      if (r.ra != RegRule::at_cfa(kAmd64FixedRa))
        return unfit("ra", fmt::format("RA rule in {} is not at CFA-8", describe(r)));
    } else if (r.ra.kind == RegRule::Kind::AtCfa) {
      add(row, r.ra.offset, false);
    } else if (r.ra != RegRule::in_reg(regs_.ra)) {
      return unfit("ra", fmt::format("RA rule in {} is neither in x30 nor at CFA+offset",
                                     describe(r)));
    } else if (fp_saved) {
      // Word order is CFA, RA, FP: a saved FP needs an RA word in front of it.
      return unfit("fp", "FP saved while the RA is still in x30");
    }
    if (fp_saved) add(row, r.fp.offset, false);
    return finish(row, r);
  }

  // The v3 flexible-FDE row for `rule`: (control, offset) pairs, padding for "as by default".
  Fit<RowWords> flex_row(const UnwindRule& r) const {
    RowWords row;
    if (r.ra.kind == RegRule::Kind::Undefined) return row;
    const bool deref = r.cfa.kind == CfaRule::Kind::DerefRegOffset;
    if (!fits_i32(r.cfa.offset)) return unfit("cfa", "CFA offset outside i32");
    add(row, control(r.cfa.reg, true, deref), true);
    add(row, r.cfa.offset, false);
    if (r.cfa.reg == regs_.sp) row.info |= kFreInfoBaseSp;
    const RegRule ra_default = regs_.arch == Arch::X86_64 ? RegRule::at_cfa(kAmd64FixedRa)
                                                          : RegRule::in_reg(regs_.ra);
    auto ra = slot(r.ra, ra_default, "ra");
    if (!ra) return tl::unexpected(ra.error());
    auto fp = slot(r.fp, RegRule::unchanged(), "fp");
    if (!fp) return tl::unexpected(fp.error());
    // Trailing padding says nothing: leave it out.
    const bool fp_absent = fp->size() == 1;
    if (!(fp_absent && ra->size() == 1))
      for (const auto& [w, c] : *ra) add(row, w, c);
    if (!fp_absent)
      for (const auto& [w, c] : *fp) add(row, w, c);
    return finish(row, r);
  }

 private:
  static void add(RowWords& row, int64_t w, bool is_control) {
    row.words.push_back(static_cast<int32_t>(w));
    row.control.push_back(is_control);
  }

  static int64_t control(uint16_t reg, bool reg_p, bool deref) {
    return (int64_t{reg} << kFlexRegShift) | (reg_p ? kFlexRegP : 0) | (deref ? kFlexDerefP : 0);
  }

  using Words = std::vector<std::pair<int64_t, bool>>;

  // A flexible RA or FP: one padding word when the rule is the default.
  Fit<Words> slot(const RegRule& rule, const RegRule& dflt, std::string_view field) const {
    if (rule == dflt) return Words{{kFlexPadding, true}};
    if (!fits_i32(rule.offset)) return unfit(std::string(field), "offset outside i32");
    switch (rule.kind) {
      case RegRule::Kind::AtCfa: return Words{{control(0, false, true), true}, {rule.offset, false}};
      case RegRule::Kind::InReg: return Words{{control(rule.reg, true, false), true}, {rule.offset, false}};
      case RegRule::Kind::AtReg: return Words{{control(rule.reg, true, true), true}, {rule.offset, false}};
      default:
        return unfit(std::string(field),
                     fmt::format("{} rule has no SFrame form", field));
    }
  }

  Fit<RowWords> finish(RowWords& row, const UnwindRule& r) const {
    if (row.words.size() > kFreInfoCountMask) return unfit("fre", "too many data words");
    if (r.ra_mangled) row.info |= kFreInfoRaMangled;
    row.info |= static_cast<uint8_t>(row.words.size() << kFreInfoCountShift);
    row.info |= static_cast<uint8_t>(size_code(row) << kFreInfoSizeShift);
    return std::move(row);
  }

  const ArchInfo& regs_;
};

struct FunctionRows {
  uint64_t start = 0, end = 0;
  std::vector<std::pair<uint32_t, RowWords>> rows;  // start offset, row
  uint8_t rep_size = 0;  // a PCMASK function's block (0: none)
  bool flex = false;
  bool signal = false;
  bool key_b = false;
};

// ld's x86_64 lazy PLT entries (dwarf::CfiTables::PltCfa) as ld writes them in SFrame: one
// PCMASK function over [from, end) whose rows repeat every block.
std::optional<FunctionRows> plt_rows(const dwarf::CfiTables::PltCfa& plt, uint64_t from,
                                     uint64_t end, uint8_t version, const Converter& conv) {
  if ((end - from) % plt.block != 0 || plt.block > std::numeric_limits<uint8_t>::max() ||
      (version == kVersion1 && plt.block != kRepSizeV1PcMask))
    return std::nullopt;
  FunctionRows out;
  out.start = from;
  out.end = end;
  out.rep_size = static_cast<uint8_t>(plt.block);
  for (const auto& [at, off] : {std::pair<uint32_t, int64_t>{0, plt.sp_offset},
                                {plt.from, plt.sp_offset + plt.extra}}) {
    UnwindRule r;
    r.cfa = {CfaRule::Kind::RegOffset, arch_info(Arch::X86_64).sp, off};
    r.ra = RegRule::at_cfa(kAmd64FixedRa);
    auto row = conv.default_row(r);
    if (!row) return std::nullopt;
    out.rows.emplace_back(at, std::move(*row));
  }
  return out;
}

// The rows of one function [lo, hi), default FDE if every row has one, else (v3) flexible;
// an x86_64 PLT FDE becomes two functions as ld makes them (PLT0, then the PCMASK entries).
Result<std::vector<FunctionRows>> function_rows(const dwarf::CfiTables& cfi, const Converter& conv,
                                                const dwarf::FdeRange& f, uint8_t version) {
  FunctionRows out;
  out.start = f.start;
  out.end = f.end;
  std::optional<FunctionRows> plt;
  std::vector<std::pair<uint32_t, UnwindRule>> rules;
  for (uint64_t a = f.start; a < f.end;) {
    auto rule = cfi.lookup(a);
    if (!rule) {
      const auto shape = a > f.start ? cfi.plt_cfa(a) : std::nullopt;
      if (shape) plt = plt_rows(*shape, a, f.end, version, conv);
      if (!plt) return tl::unexpected(rule.error());
      out.end = a;
      break;
    }
    if (!*rule) return fail(f.section, f.offset, "fde", fmt::format("no CFI row at pc {:#x}", a));
    const uint64_t end = std::min((*rule)->func_end, f.end);
    if (end <= a || rules.size() >= kMaxRowsPerFunction)
      return fail(f.section, f.offset, "fde", fmt::format("rows do not advance at pc {:#x}", a));
    rules.emplace_back(static_cast<uint32_t>(a - f.start), std::move(**rule));
    a = end;
  }
  for (const auto& [off, rule] : rules) {
    out.signal |= rule.signal_frame;
    out.key_b |= rule.pauth_key == PauthKey::B;
  }
  if (out.signal && version < kVersion3)
    return fail(f.section, f.offset, "fde", "a signal frame has no SFrame v1/v2 encoding");
  // Default rows first; v3 falls back to flexible ones.
  const auto fill = [&](bool flex) -> std::optional<Unfit> {
    out.rows.clear();
    out.flex = flex;
    for (const auto& [off, rule] : rules) {
      auto row = flex ? conv.flex_row(rule) : conv.default_row(rule);
      if (!row)
        return Unfit{row.error().field,
                     fmt::format("pc {:#x}: {}", f.start + off, row.error().message)};
      // Rows that say the same as the one before add nothing (gas emits none either).
      if (!out.rows.empty() && out.rows.back().second == *row) continue;
      out.rows.emplace_back(off, std::move(*row));
    }
    return std::nullopt;
  };
  std::optional<Unfit> why = fill(false);
  if (why && version >= kVersion3) why = fill(true);
  if (why) return fail(f.section, f.offset, why->field, why->message);
  std::vector<FunctionRows> pieces{std::move(out)};
  if (plt) pieces.push_back(std::move(*plt));
  return pieces;
}

uint8_t abi_for(Arch arch) { return arch == Arch::X86_64 ? kAbiAmd64Little : kAbiAArch64Little; }

}  // namespace

Result<CfiConversion> from_cfi(const elf::ElfFile& file, uint8_t version) {
  if (version < kVersion1 || version > kVersion3)
    return fail(ErrorKind::Unsupported, kSectionName, kOffVersion, "sfp_version",
                fmt::format("cannot write version {}", version));
  const auto arch = file.arch();
  if (!arch || (*arch != Arch::X86_64 && *arch != Arch::AArch64) ||
      file.endian() != Endian::Little)
    return fail(ErrorKind::Unsupported, "ELF", kOffAbiArch, "e_machine",
                "SFrame is built for little-endian x86_64 and AArch64 only");
  auto ranges = dwarf::fde_ranges(file);
  if (!ranges) return tl::unexpected(ranges.error());
  if (ranges->empty())
    return fail(ErrorKind::NotFound, "ELF", 0, "sections", "no .eh_frame or .debug_frame FDEs");
  auto cfi = dwarf::CfiTables::open(file);
  if (!cfi) return tl::unexpected(cfi.error());

  std::sort(ranges->begin(), ranges->end(),
            [](const dwarf::FdeRange& a, const dwarf::FdeRange& b) { return a.start < b.start; });
  CfiConversion out;
  out.functions = ranges->size();
  Section& s = out.section;
  s.header.version = version;
  s.header.flags = kFlagFdeSorted;
  s.header.abi_arch = abi_for(*arch);
  s.header.cfa_fixed_ra_offset = *arch == Arch::X86_64 ? kAmd64FixedRa : kFixedOffsetNone;
  s.endian = Endian::Little;
  const Converter conv(*arch);
  uint64_t covered_to = 0;
  for (const dwarf::FdeRange& f : *ranges) {
    if (f.start < covered_to) {
      out.skipped.push_back({f.start, f.end,
                             Error{f.section, f.offset, "initial_location",
                                   fmt::format("overlaps the function before (ends {:#x})",
                                               covered_to)}});
      continue;
    }
    if (f.end - f.start > std::numeric_limits<uint32_t>::max()) {
      out.skipped.push_back({f.start, f.end, Error{f.section, f.offset, "address_range",
                                                   "function larger than a u32 size"}});
      continue;
    }
    if (f.work > kMaxFunctionWork) {
      out.skipped.push_back({f.start, f.end, Error{f.section, f.offset, "instructions",
                                                   fmt::format("converting its rows asks libdw for "
                                                               "{} steps, over {}",
                                                               f.work, kMaxFunctionWork)}});
      continue;
    }
    auto pieces = function_rows(*cfi, conv, f, version);
    if (!pieces) {
      out.skipped.push_back({f.start, f.end, pieces.error()});
      continue;
    }
    covered_to = f.end;
    for (FunctionRows& rows : *pieces) {
      Fde fde;
      fde.func_start = rows.start;
      fde.size = static_cast<uint32_t>(rows.end - rows.start);
      fde.num_fres = static_cast<uint32_t>(rows.rows.size());
      if (rows.key_b) fde.info |= kInfoPauthKeyB;
      if (rows.signal) fde.info |= kInfoSignal;
      if (rows.rep_size != 0) {
        fde.info |= kInfoPcMask;
        fde.rep_size = rows.rep_size;
      }
      if (rows.flex) {
        fde.info2 = kFdeTypeFlex;
        ++out.flex;
      }
      for (auto& [off, row] : rows.rows) {
        Fre fre;
        fre.start_offset = off;
        fre.info = row.info;
        fre.first_word = static_cast<uint32_t>(s.words.size());
        s.words.insert(s.words.end(), row.words.begin(), row.words.end());
        fde.fres.push_back(fre);
      }
      s.fdes.push_back(std::move(fde));
    }
  }
  s.header.num_fdes = static_cast<uint32_t>(s.fdes.size());
  return out;
}

}  // namespace unwindkit::sframe
