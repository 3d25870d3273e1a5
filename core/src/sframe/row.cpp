#include "unwindkit/sframe/row.h"

#include <fmt/format.h>

#include "read.h"

namespace unwindkit::sframe {

namespace {

unsigned max_default_words(uint8_t abi) {
  switch (abi) {
    case kAbiAmd64Little: return kMaxWordsAmd64;
    case kAbiS390xBig: return kMaxWordsS390x;
    default: return kMaxWordsAArch64;
  }
}

// One default-FDE RA or FP word. s390x v2 marks "value lives in DWARF register word >> 1"
// with the low bit; its RA word 0 is padding (RA not saved).
Slot default_slot(const Header& h, int32_t word, bool is_ra) {
  if (h.abi_arch == kAbiS390xBig) {
    if (is_ra && word == kS390xRaPadding) return {Slot::Kind::Padding, 0, 0};
    if (h.version == kVersion2 && (word & kS390xRegisterFlag) != 0)
      return {Slot::Kind::InReg, static_cast<uint16_t>(static_cast<uint32_t>(word) >> 1), 0};
  }
  return {Slot::Kind::AtCfa, 0, word};
}

// The CFA offset a row's word stands for: s390x stores it as (offset - 160) / 8, in default
// and flexible FDEs alike (libsframe's sframe_fre_get_cfa_offset); its RA and FP offsets, and
// every other ABI's, are stored as they are.
int64_t cfa_offset(const Header& h, int32_t word) {
  if (h.abi_arch == kAbiS390xBig) return int64_t{word} * kS390xCfaAlignment + kS390xCfaAdjustment;
  return word;
}

// Where a row's fields sit in the section, so that an error points at the byte it names
// (worked out only for an error).
struct FreAt {
  const Fre& fre;
  uint8_t fre_type;
  Format format;
  uint64_t info() const { return fre.offset + detail::fre_start_size(fre_type, format); }
  uint64_t word(size_t k) const { return info() + 1 + k * (size_t{1} << fre.word_size_code()); }
};

// Both interpreters fill the one Result they return (every path returns `out`, so it is
// built in the caller's storage): a Row built aside and then copied stalled on the copy's
// wide loads of its narrow fields, a third of the strict checks' time.
Result<Row> interpret_default(const Header& h, const Fre& fre, std::span<const int32_t> words,
                              const FreAt& at, size_t i, size_t j) {
  Result<Row> out(tl::in_place);
  Row& row = *out;
  const size_t n = words.size();
  if (n == 0) {
    row.ra_undefined = true;
    return out;
  }
  if (n > max_default_words(h.abi_arch)) {
    out = fail(h.section_name(), at.info(), detail::fre_field(i, j, "info"),
               fmt::format("{} data words, the ABI allows at most {}", n,
                           max_default_words(h.abi_arch)));
    return out;
  }
  const ArchInfo& regs = abi_regs(h.abi_arch);
  row.cfa = {Slot::Kind::InReg, fre.base_sp() ? regs.sp : regs.fp, cfa_offset(h, words[0])};
  size_t k = 1;
  if (h.cfa_fixed_ra_offset != kFixedOffsetNone)
    row.ra = {Slot::Kind::Fixed, 0, h.cfa_fixed_ra_offset};
  else if (k < n)
    row.ra = default_slot(h, words[k++], true);
  if (h.cfa_fixed_fp_offset != kFixedOffsetNone)
    row.fp = {Slot::Kind::Fixed, 0, h.cfa_fixed_fp_offset};
  else if (k < n)
    row.fp = default_slot(h, words[k++], false);
  if (k != n)
    out = fail(h.section_name(), at.info(), detail::fre_field(i, j, "info"),
               fmt::format("{} data words, only {} have a meaning here", n, k));
  return out;
}

Slot flex_slot(uint32_t control, int32_t offset) {
  const auto reg = static_cast<uint16_t>(control >> kFlexRegShift);
  if ((control & kFlexRegP) == 0) return {Slot::Kind::AtCfa, 0, offset};
  return {(control & kFlexDerefP) != 0 ? Slot::Kind::AtReg : Slot::Kind::InReg, reg, offset};
}

Result<Row> interpret_flex(const Header& h, const Fre& fre, std::span<const int32_t> words,
                           const FreAt& at, size_t i, size_t j) {
  Result<Row> out(tl::in_place);
  Row& row = *out;
  const size_t n = words.size();
  if (n == 0) {
    row.ra_undefined = true;
    return out;
  }
  if (n < 2) {
    out = fail(h.section_name(), at.info(), detail::fre_field(i, j, "info"),
               "a flexible FRE needs a (control, offset) pair for the CFA");
    return out;
  }
  const uint32_t cfa_control = detail::word_bits(words[0], fre.info);
  if ((cfa_control & kFlexRegP) == 0) {
    out = fail(h.section_name(), at.word(0), detail::fre_field(i, j, "word[0]"),
               "the CFA cannot be based on the CFA");
    return out;
  }
  row.cfa = flex_slot(cfa_control, words[1]);
  row.cfa.offset = cfa_offset(h, words[1]);
  size_t k = 2;
  // RA, then FP: each either one 0 word (padding) or a (control, offset) pair.
  for (Slot* slot : {&row.ra, &row.fp}) {
    if (k >= n) break;
    const uint32_t control = detail::word_bits(words[k], fre.info);
    if (control == kFlexPadding) {
      *slot = {Slot::Kind::Padding, 0, 0};
      k += 1;
      continue;
    }
    if (k + 1 >= n) {
      out = fail(h.section_name(), at.word(k),
                 detail::fre_field(i, j, fmt::format("word[{}]", k)),
                 "control word without its offset word");
      return out;
    }
    *slot = flex_slot(control, words[k + 1]);
    k += 2;
  }
  if (k != n)
    out = fail(h.section_name(), at.info(), detail::fre_field(i, j, "info"),
               fmt::format("{} data words, only {} have a meaning here", n, k));
  return out;
}

}  // namespace

Result<Row> detail::interpret_words(const Header& header, bool flex, uint8_t fre_type,
                                    const Fre& fre, std::span<const int32_t> words,
                                    size_t fde_index, size_t fre_index) {
  const FreAt at{fre, fre_type, header.format};
  if (flex) return interpret_flex(header, fre, words, at, fde_index, fre_index);
  return interpret_default(header, fre, words, at, fde_index, fre_index);
}

Result<Row> interpret(const Section& section, size_t fde_index, size_t fre_index) {
  const Fde& fde = section.fdes.at(fde_index);
  const Fre& fre = fde.fres.at(fre_index);
  return detail::interpret_words(section.header, fde.flex(section.header.version),
                                 fde.fre_type(), fre, section.fre_words(fre), fde_index,
                                 fre_index);
}

}  // namespace unwindkit::sframe
