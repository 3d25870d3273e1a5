#include "unwindkit/compact_unwind/dump.h"

#include <fmt/format.h>

#include <iterator>

#include "unwindkit/compact_unwind/constants.h"

namespace unwindkit::compact_unwind {

namespace {

// A name with llvm-objdump's " + 0x<addend>" suffix when the addend is not zero.
std::string target_text(const std::optional<RelocTarget>& t) {
  if (!t) return {};
  return t->addend ? fmt::format("{} + {:#x}", t->name, t->addend) : t->name;
}

std::string hex(uint64_t v) { return fmt::format("0x{:x}", v); }

std::string offset_text(int64_t off) {
  return off < 0 ? fmt::format("-{}", -off) : fmt::format("+{}", off);
}

}  // namespace

std::string dump_unwind_info(const UnwindInfo& info) {
  const Header& h = info.header;
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "Contents of __unwind_info section:\n");
  fmt::format_to(o, "  Version:                                   {}\n", hex(h.version));
  fmt::format_to(o, "  Common encodings array section offset:     {}\n",
                    hex(h.common_encodings_offset));
  fmt::format_to(o, "  Number of common encodings in array:       {}\n",
                    hex(h.common_encodings_count));
  fmt::format_to(o, "  Personality function array section offset: {}\n",
                    hex(h.personalities_offset));
  fmt::format_to(o, "  Number of personality functions in array:  {}\n",
                    hex(h.personalities_count));
  fmt::format_to(o, "  Index array section offset:                {}\n", hex(h.index_offset));
  fmt::format_to(o, "  Number of indices in array:                {}\n", hex(h.index_count));
  fmt::format_to(o, "  Common encodings: (count = {})\n", info.common_encodings.size());
  for (size_t i = 0; i < info.common_encodings.size(); ++i)
    fmt::format_to(o, "    encoding[{}]: 0x{:08x}\n", i, info.common_encodings[i]);
  fmt::format_to(o, "  Personality functions: (count = {})\n", info.personalities.size());
  for (size_t i = 0; i < info.personalities.size(); ++i)
    fmt::format_to(o, "    personality[{}]: 0x{:08x}\n", i + 1, info.personalities[i]);
  fmt::format_to(o, "  Top level indices: (count = {})\n", info.index.size());
  for (size_t i = 0; i < info.index.size(); ++i)
    fmt::format_to(o,
                   "    [{}]: function offset=0x{:08x}, 2nd level page offset=0x{:08x}, "
                   "LSDA offset=0x{:08x}\n",
                   i, info.index[i].function_offset, info.index[i].page_offset,
                   info.index[i].lsda_offset);
  fmt::format_to(o, "  LSDA descriptors:\n");
  for (size_t i = 0; i < info.lsdas.size(); ++i)
    fmt::format_to(o, "    [{}]: function offset=0x{:08x}, LSDA offset=0x{:08x}\n", i,
                      info.lsdas[i].function_offset, info.lsdas[i].lsda_offset);
  fmt::format_to(o, "  Second level indices:\n");
  for (const Page& p : info.pages) {
    fmt::format_to(o, "    Second level index[{}]: offset in section=0x{:08x}, base function "
                      "offset=0x{:08x}\n",
                      p.index, p.section_offset, p.base_function_offset);
    if (!p.encodings.empty()) {
      fmt::format_to(o, "      Page encodings: (count = {})\n", p.encodings.size());
      for (size_t k = 0; k < p.encodings.size(); ++k)
        fmt::format_to(o, "        encoding[{}]: 0x{:08x}\n", info.common_encodings.size() + k,
                          p.encodings[k]);
    }
    for (size_t k = 0; k < p.entries.size(); ++k) {
      const PageEntry& e = p.entries[k];
      if (p.kind == kPageKindCompressed)
        fmt::format_to(o, "      [{}]: function offset=0x{:08x}, encoding[{}]=0x{:08x}\n", k,
                          e.function_offset, e.encoding_index, e.encoding);
      else
        fmt::format_to(o, "      [{}]: function offset=0x{:08x}, encoding=0x{:08x}\n", k,
                          e.function_offset, e.encoding);
    }
  }
  return out;
}

std::string dump_object_section(const std::vector<ObjectEntry>& entries) {
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "Contents of __compact_unwind section:\n");
  for (const ObjectEntry& e : entries) {
    fmt::format_to(o, "  Entry at offset {}:\n", hex(e.offset));
    fmt::format_to(o, "    start:                {} {}\n", hex(e.function),
                      target_text(e.function_target));
    fmt::format_to(o, "    length:               {}\n", hex(e.length));
    fmt::format_to(o, "    compact encoding:     0x{:08x}\n", e.encoding);
    if (e.personality_target)
      fmt::format_to(o, "    personality function: {} {}\n", hex(e.personality),
                        target_text(e.personality_target));
    if (e.lsda_target)
      fmt::format_to(o, "    LSDA:                 {} {}\n", hex(e.lsda),
                        target_text(e.lsda_target));
  }
  return out;
}

std::string describe_encoding(const DecodedEncoding& d) {
  std::string out(mode_name(d.arch, d.mode));
  const bool arm = d.arch == Arch::AArch64;
  const ArchInfo& regs = arch_info(d.arch);
  const unsigned w = regs.word_size;
  const std::string sp = reg_name(d.arch, regs.sp);
  const std::string fp = reg_name(d.arch, regs.fp);
  switch (d.kind) {
    case Kind::None:
      out += " (no unwind information)";
      break;
    case Kind::Dwarf:
      out += fmt::format(" eh_frame offset={}", hex(d.dwarf_offset));
      break;
    case Kind::FramePointer:
      out += fmt::format(" cfa={}+{} ra=[cfa-{}] {}=[cfa-{}]", fp, 2 * w, w, fp, 2 * w);
      if (d.ra_mangled) out += " ra-signed";
      break;
    case Kind::FramelessImmediate:
      out += fmt::format(" stack size={} cfa={}+{} ra={}", d.stack_size, sp, d.stack_size,
                         arm ? reg_name(d.arch, regs.ra) : fmt::format("[cfa-{}]", w));
      break;
    case Kind::FramelessIndirect:
      out += fmt::format(" stack size=imm32 at function+{}, +{} cfa={}+size ra=[cfa-{}]",
                         hex(d.stack_immediate_offset), d.stack_adjust, sp, w);
      break;
  }
  for (const SavedSlot& s : d.saved)
    out += fmt::format(" {}=[cfa{}]", reg_name(d.arch, s.reg), offset_text(s.cfa_offset));
  if (d.personality_index) out += fmt::format(" personality={}", d.personality_index);
  if (d.has_lsda) out += " lsda";
  if (d.is_not_function_start) out += " not-function-start";
  return out;
}

std::string dump_decoded(const UnwindInfo& info, Arch arch, uint64_t image_base) {
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "Decoded entries:\n");
  for (const Page& p : info.pages) {
    const uint32_t page_end = info.index[p.index + 1].function_offset;
    for (size_t k = 0; k < p.entries.size(); ++k) {
      const PageEntry& e = p.entries[k];
      const uint32_t end = k + 1 < p.entries.size() ? p.entries[k + 1].function_offset : page_end;
      auto d = decode_encoding(arch, e.encoding);
      fmt::format_to(o, "  0x{:x}-0x{:x} 0x{:08x} {}\n", image_base + e.function_offset,
                        image_base + end, e.encoding,
                        d ? describe_encoding(*d) : "invalid: " + d.error().message);
    }
  }
  return out;
}

}  // namespace unwindkit::compact_unwind
