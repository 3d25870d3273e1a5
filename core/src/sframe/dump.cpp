// Mirrors libsframe's sframe-dump.c: same strings, same printf widths (so rows keep their
// trailing spaces), same quirks per binutils release (see notes §1).
#include "unwindkit/sframe/dump.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <functional>
#include <iterator>
#include <string_view>
#include <vector>

#include "unwindkit/sframe/row.h"

namespace unwindkit::sframe {

namespace {

// binutils 2.40 is the only release that prints v1; 2.41+ refuse it. v2/v3 look like 2.46.
bool old_style(const Section& s) { return s.header.version == kVersion1; }

std::string flags_text(const Section& s) {
  const uint8_t flags = s.header.flags;
  if (old_style(s)) {
    // 2.40 strcpy()s each name over the previous one: only the last set flag survives.
    // CTF Frame spells them as its header does (CTF_FRAME_F_...).
    const char* prefix = s.header.info().prefix;
    if ((flags & kFlagFramePointer) != 0) return fmt::format("{}_F_FRAME_POINTER", prefix);
    if ((flags & kFlagFdeSorted) != 0) return fmt::format("{}_F_FDE_SORTED", prefix);
    return "NONE";
  }
  std::vector<const char*> names;
  if ((flags & kFlagFdeSorted) != 0) names.push_back("SFRAME_F_FDE_SORTED");
  if ((flags & kFlagFramePointer) != 0) names.push_back("SFRAME_F_FRAME_POINTER");
  if ((flags & kFlagFdeFuncStartPcrel) != 0) names.push_back("SFRAME_F_FDE_FUNC_START_PCREL");
  if (names.empty()) return "NONE";
  return fmt::format("{}", fmt::join(names, ",\n           "));
}

void dump_header(const Section& s, fmt::memory_buffer& out) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\n  Header :\n\n");
  fmt::format_to(o, "    Version: {}_VERSION_{}\n", s.header.info().prefix, s.header.version);
  fmt::format_to(o, "    Flags: {}\n", flags_text(s));
  if (!old_style(s)) {
    if (s.fp_fixed())
      fmt::format_to(o, "    CFA fixed FP offset: {}\n", s.header.cfa_fixed_fp_offset);
    if (s.ra_fixed())
      fmt::format_to(o, "    CFA fixed RA offset: {}\n", s.header.cfa_fixed_ra_offset);
  }
  fmt::format_to(o, "    Num FDEs: {}\n", static_cast<int32_t>(s.header.num_fdes));
  fmt::format_to(o, "    Num FREs: {}\n", static_cast<int32_t>(s.header.num_fres));
}

std::string reg_text(const Section& s, uint16_t reg) {
  const ArchInfo& regs = abi_regs(s.header.abi_arch);
  if (reg == regs.sp) return "sp";
  if (reg == regs.fp) return "fp";
  return fmt::format(FMT_COMPILE("r{}"), reg);
}

std::string reg_offset_text(const Section& s, const Slot& slot) {
  const std::string text =
      fmt::format(FMT_COMPILE("{}{:+d}"), reg_text(s, slot.reg), slot.offset);
  return slot.kind == Slot::Kind::AtReg ? "(" + text + ")" : text;
}

std::string cfa_cell(const Section& s, const Fde& fde, const Row& row) {
  if (old_style(s))
    return fmt::format(FMT_COMPILE("{}+{}"), reg_text(s, row.cfa.reg), row.cfa.offset);
  if (!fde.flex(s.header.version) && row.cfa.kind == Slot::Kind::InReg)
    return fmt::format(FMT_COMPILE("{}{:+d}"), reg_text(s, row.cfa.reg), row.cfa.offset);
  return reg_offset_text(s, row.cfa);
}

// FP and RA cells: "c-16" (saved at CFA-16), "u" (not saved), "f" (2.46: fixed RA offset),
// "U" (flexible padding), "rN" (s390x: in register N), "reg+off" / "(reg+off)" (flexible).
std::string slot_cell(const Section& s, const Fde& fde, const Slot& slot, bool is_ra) {
  const bool flex = fde.flex(s.header.version);
  switch (slot.kind) {
    case Slot::Kind::Absent: return is_ra && !old_style(s) && s.ra_fixed() ? "f" : "u";
    case Slot::Kind::Padding: return flex && is_ra ? "U" : "u";
    case Slot::Kind::Fixed:
      if (is_ra) return old_style(s) ? "u" : "f";
      return fmt::format(FMT_COMPILE("c{:+d}"), slot.offset);
    case Slot::Kind::AtCfa: return fmt::format(FMT_COMPILE("c{:+d}"), slot.offset);
    case Slot::Kind::InReg:
    case Slot::Kind::AtReg:
      if (!flex) return fmt::format(FMT_COMPILE("r{}"), slot.reg);
      return reg_offset_text(s, slot);
  }
  return "u";
}

// `text` left-aligned in `width` columns, as printf's "%-10s": the cells are ASCII, so this
// skips fmt's display-width scan of every cell.
void append_padded(fmt::memory_buffer& out, std::string_view text, size_t width) {
  out.append(text);
  for (size_t n = text.size(); n < width; ++n) out.push_back(' ');
}

void dump_function(const Section& s, size_t index, fmt::memory_buffer& out) {
  const Fde& fde = s.fdes[index];
  auto o = std::back_inserter(out);
  fmt::format_to(o, FMT_COMPILE("\n    func idx [{}]: pc = {:#x}, size = {} bytes"),
                 static_cast<int32_t>(index), fde.func_start, static_cast<int32_t>(fde.size));
  if (s.is_aarch64() && fde.pauth_key_b()) fmt::format_to(o, FMT_COMPILE(", pauth = B key"));
  if (!old_style(s)) {
    std::string attr;
    if (fde.signal(s.header.version)) attr += 'S';
    if (fde.flex(s.header.version)) attr += 'F';
    if (!attr.empty()) fmt::format_to(o, FMT_COMPILE(", attr = \"{}\""), attr);
  }
  out.append(std::string_view("\n    "));
  append_padded(out, "STARTPC", 7);
  append_padded(out, fde.pcmask() ? "[m]" : "   ", 8);
  out.push_back(' ');
  append_padded(out, "CFA", 10);
  append_padded(out, "FP", 10);
  append_padded(out, "RA", 13);
  for (size_t j = 0; j < fde.fres.size(); ++j) {
    const Fre& fre = fde.fres[j];
    // PCMASK rows show the raw offset inside the repeated block.
    const uint64_t pc = fde.pcmask() ? fre.start_offset : fde.func_start + fre.start_offset;
    fmt::format_to(o, FMT_COMPILE("\n    {:016x}"), pc);
    auto row = interpret(s, index, j);
    // Words that mean nothing (validate() reports them): say so instead of guessing.
    if (!row) {
      fmt::format_to(o, FMT_COMPILE("  invalid: {}"), row.error().message);
      continue;
    }
    if (row->ra_undefined && !old_style(s)) {
      fmt::format_to(o, FMT_COMPILE("  RA undefined"));
      continue;
    }
    out.append(std::string_view("  "));
    append_padded(out, row->ra_undefined ? std::string(fre.base_sp() ? "sp+0" : "fp+0")
                                         : cfa_cell(s, fde, *row),
                  10);
    append_padded(out, slot_cell(s, fde, row->fp, false), 10);
    append_padded(out, slot_cell(s, fde, row->ra, true) + (fre.ra_mangled() ? "[s]" : "   "), 13);
  }
  out.push_back('\n');
}

}  // namespace

void dump(const Section& section, const std::function<void(std::string_view)>& sink) {
  // Formats parsed at compile time into one small buffer handed to `sink` whenever it fills:
  // the dump of a large section is tens of megabytes, and holding it whole (then copying it
  // into a string) cost more in fresh pages than the formatting itself.
  constexpr size_t kChunk = size_t{1} << 16;
  fmt::memory_buffer out;
  out.reserve(2 * kChunk);
  auto flush = [&] {
    sink(std::string_view(out.data(), out.size()));
    out.clear();
  };
  fmt::format_to(std::back_inserter(out), "Contents of the {} section {}:",
                 section.header.info().title, section.header.section_name());
  dump_header(section, out);
  fmt::format_to(std::back_inserter(out), "\n  Function Index :\n");
  for (size_t i = 0; i < section.fdes.size(); ++i) {
    dump_function(section, i, out);
    if (out.size() >= kChunk) flush();
  }
  flush();
}

std::string dump(const Section& section) {
  std::string text;
  dump(section, [&](std::string_view piece) { text.append(piece); });
  return text;
}

}  // namespace unwindkit::sframe
