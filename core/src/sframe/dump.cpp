// Mirrors libsframe's sframe-dump.c: same strings, same printf widths (so rows keep their
// trailing spaces), same quirks per binutils release (see notes §1).
#include "unwindkit/sframe/dump.h"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (fmt 11 moved it here)

#include <cstring>
#include <functional>
#include <iterator>
#include <span>
#include <string_view>
#include <vector>

#include "read.h"
#include "row_memo.h"
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

// One row's text, written straight into the output buffer: fmt's writer and a std::string
// for each cell took most of a large dump's time (the profile of a 100,000-function dump).
// A row line is at most kMaxRow bytes (three cells of a register, a sign and 20 digits);
// the "invalid" lines, whose message has no bound, go through fmt.
class RowText {
 public:
  static constexpr size_t kMaxRow = 192;

  explicit RowText(fmt::memory_buffer& out) : out_(out), at_(out.size()) {
    out.resize(at_ + kMaxRow);
    p_ = out.data() + at_;
  }
  RowText(const RowText&) = delete;
  RowText& operator=(const RowText&) = delete;
  ~RowText() { out_.resize(static_cast<size_t>(p_ - out_.data())); }

  void text(std::string_view t) {
    std::memcpy(p_, t.data(), t.size());
    p_ += t.size();
  }
  void ch(char c) { *p_++ = c; }
  // "%lx".
  void hex(uint64_t v) {
    const int digits = v == 0 ? 1 : (67 - __builtin_clzll(v)) / 4;
    for (int i = digits - 1; i >= 0; --i, v >>= 4) p_[i] = "0123456789abcdef"[v & 0xf];
    p_ += digits;
  }
  // "%016lx".
  void hex16(uint64_t v) {
    for (int i = 15; i >= 0; --i, v >>= 4) p_[i] = "0123456789abcdef"[v & 0xf];
    p_ += 16;
  }
  void number(int64_t v) {
    const fmt::format_int digits(v);
    text(std::string_view(digits.data(), digits.size()));
  }
  // "{:+d}".
  void signed_number(int64_t v) {
    if (v >= 0) ch('+');
    number(v);
  }
  // Where a cell begins, and its padding to `width` columns as printf's "%-10s".
  const char* mark() const { return p_; }
  void pad(const char* cell, size_t width) {
    while (static_cast<size_t>(p_ - cell) < width) ch(' ');
  }

 private:
  fmt::memory_buffer& out_;
  size_t at_;
  char* p_;
};

void reg_text(RowText& o, const Section& s, uint16_t reg) {
  const ArchInfo& regs = abi_regs(s.header.abi_arch);
  if (reg == regs.sp) return o.text("sp");
  if (reg == regs.fp) return o.text("fp");
  o.ch('r');
  o.number(reg);
}

void reg_offset_text(RowText& o, const Section& s, const Slot& slot) {
  const bool deref = slot.kind == Slot::Kind::AtReg;
  if (deref) o.ch('(');
  reg_text(o, s, slot.reg);
  o.signed_number(slot.offset);
  if (deref) o.ch(')');
}

void cfa_cell(RowText& o, const Section& s, const Fde& fde, const Row& row) {
  if (old_style(s)) {
    reg_text(o, s, row.cfa.reg);
    o.ch('+');
    return o.number(row.cfa.offset);
  }
  if (!fde.flex(s.header.version) && row.cfa.kind == Slot::Kind::InReg) {
    reg_text(o, s, row.cfa.reg);
    return o.signed_number(row.cfa.offset);
  }
  reg_offset_text(o, s, row.cfa);
}

// FP and RA cells: "c-16" (saved at CFA-16), "u" (not saved), "f" (2.46: fixed RA offset),
// "U" (flexible padding), "rN" (s390x: in register N), "reg+off" / "(reg+off)" (flexible).
void slot_cell(RowText& o, const Section& s, const Fde& fde, const Slot& slot, bool is_ra) {
  const bool flex = fde.flex(s.header.version);
  switch (slot.kind) {
    case Slot::Kind::Absent: return o.text(is_ra && !old_style(s) && s.ra_fixed() ? "f" : "u");
    case Slot::Kind::Padding: return o.text(flex && is_ra ? "U" : "u");
    case Slot::Kind::Fixed:
      if (is_ra) return o.text(old_style(s) ? "u" : "f");
      o.ch('c');
      return o.signed_number(slot.offset);
    case Slot::Kind::AtCfa:
      o.ch('c');
      return o.signed_number(slot.offset);
    case Slot::Kind::InReg:
    case Slot::Kind::AtReg:
      if (flex) return reg_offset_text(o, s, slot);
      o.ch('r');
      return o.number(slot.reg);
  }
  o.text("u");
}

// Rows alike (row_memo.h) print alike after their start: each distinct row's cells are
// interpreted and formatted once.
using CellMemo = detail::RowMemo<std::string>;

// One function as the dump reads it: from a decoded Section (its rows, and the section's one
// array of words) or straight from the bytes (the rows and words of this function alone).
struct FunctionRows {
  size_t index = 0;
  const Fde& fde;
  std::span<const Fre> rows;
  std::span<const int32_t> words;  // what each row's first_word indexes

  std::span<const int32_t> words_of(const Fre& fre) const {
    return words.subspan(fre.first_word, fre.word_count());
  }
};

// One row: its start and its three cells.
void dump_row(const Section& s, const FunctionRows& f, size_t j, CellMemo& memo,
              fmt::memory_buffer& out) {
  const Fde& fde = f.fde;
  const Fre& fre = f.rows[j];
  // PCMASK rows show the raw offset inside the repeated block.
  const uint64_t pc = fde.pcmask() ? fre.start_offset : fde.func_start + fre.start_offset;
  const std::span<const int32_t> words = f.words_of(fre);
  const auto key = detail::row_key(fde, fre, words);
  if (const std::string* cells = key ? memo.find(*key) : nullptr) {
    RowText o(out);
    o.text("\n    ");
    o.hex16(pc);
    return o.text(*cells);
  }
  auto row = detail::interpret_words(s.header, fde.flex(s.header.version), fde.fre_type(), fre,
                                     words, f.index, j);
  // Words that mean nothing (validate() reports them): say so instead of guessing.
  if (!row) {
    {
      RowText o(out);
      o.text("\n    ");
      o.hex16(pc);
    }
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("  invalid: {}"), row.error().message);
    return;
  }
  RowText o(out);
  o.text("\n    ");
  o.hex16(pc);
  const char* cells = o.mark();
  if (row->ra_undefined && !old_style(s)) {
    o.text("  RA undefined");
  } else {
    o.text("  ");
    const char* cell = o.mark();
    if (row->ra_undefined) o.text(fre.base_sp() ? "sp+0" : "fp+0");
    else cfa_cell(o, s, fde, *row);
    o.pad(cell, 10);
    cell = o.mark();
    slot_cell(o, s, fde, row->fp, false);
    o.pad(cell, 10);
    cell = o.mark();
    slot_cell(o, s, fde, row->ra, true);
    o.text(fre.ra_mangled() ? "[s]" : "   ");
    o.pad(cell, 13);
  }
  if (key) memo.insert(*key, std::string(cells, o.mark()));
}

void dump_function(const Section& s, const FunctionRows& f, CellMemo& memo,
                   fmt::memory_buffer& out) {
  const Fde& fde = f.fde;
  {
    RowText o(out);
    o.text("\n    func idx [");
    o.number(static_cast<int32_t>(f.index));
    o.text("]: pc = 0x");
    o.hex(fde.func_start);
    o.text(", size = ");
    o.number(static_cast<int32_t>(fde.size));
    o.text(" bytes");
    if (s.is_aarch64() && fde.pauth_key_b()) o.text(", pauth = B key");
    if (!old_style(s)) {
      const bool signal = fde.signal(s.header.version);
      const bool flex = fde.flex(s.header.version);
      if (signal || flex) {
        o.text(", attr = \"");
        if (signal) o.ch('S');
        if (flex) o.ch('F');
        o.ch('"');
      }
    }
  }
  // "%-7s%-8s %-10s%-10s%-13s" of STARTPC, the PCMASK mark, CFA, FP and RA.
  out.append(fde.pcmask() ? std::string_view("\n    STARTPC[m]      CFA       FP        RA           ")
                          : std::string_view("\n    STARTPC         CFA       FP        RA           "));
  for (size_t j = 0; j < f.rows.size(); ++j) dump_row(s, f, j, memo, out);
  out.push_back('\n');
}

// Formats parsed at compile time into one small buffer handed to `sink` whenever it fills:
// the dump of a large section is tens of megabytes, and holding it whole (then copying it into
// a string) cost more in fresh pages than the formatting itself.
class Chunks {
 public:
  explicit Chunks(const std::function<void(std::string_view)>& sink) : sink_(sink) {
    out.reserve(2 * kChunk);
  }
  fmt::memory_buffer out;
  void maybe_flush() {
    if (out.size() >= kChunk) flush();
  }
  void flush() {
    sink_(std::string_view(out.data(), out.size()));
    out.clear();
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 16;
  const std::function<void(std::string_view)>& sink_;
};

// The title and header; `s` needs only its header (the functions follow).
void dump_title(const Section& s, fmt::memory_buffer& out) {
  fmt::format_to(std::back_inserter(out), "Contents of the {} section {}:", s.header.info().title,
                 s.header.section_name());
  dump_header(s, out);
  fmt::format_to(std::back_inserter(out), "\n  Function Index :\n");
}

}  // namespace

void dump(const Section& section, const std::function<void(std::string_view)>& sink) {
  Chunks chunks(sink);
  dump_title(section, chunks.out);
  CellMemo memo;
  for (size_t i = 0; i < section.fdes.size(); ++i) {
    const Fde& fde = section.fdes[i];
    dump_function(section, {i, fde, fde.fres, section.words}, memo, chunks.out);
    chunks.maybe_flush();
  }
  chunks.flush();
}

std::string dump(const Section& section) {
  std::string text;
  dump(section, [&](std::string_view piece) { text.append(piece); });
  return text;
}

Result<void> dump(Bytes bytes, uint64_t section_address, Format format,
                  const std::function<void(std::string_view)>& sink) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  // Read whole first, as decode() reads it: a section that fails is reported, not half
  // printed. This walk keeps nothing; decoding (a heap block per function, six times the
  // section in all) took more of a large dump than the printing.
  auto read = detail::for_each_function(*layout, section_address, format,
                                        [](size_t, const Fde&, const std::vector<Fre>&,
                                           const std::vector<int32_t>&) {});
  if (!read) return tl::unexpected(read.error());
  Section header_only;
  header_only.header = layout->header;
  header_only.endian = layout->section.endian();
  header_only.address = section_address;
  Chunks chunks(sink);
  dump_title(header_only, chunks.out);
  CellMemo memo;
  read = detail::for_each_function(
      *layout, section_address, format,
      [&](size_t i, const Fde& fde, const std::vector<Fre>& rows,
          const std::vector<int32_t>& words) {
        dump_function(header_only, {i, fde, rows, words}, memo, chunks.out);
        chunks.maybe_flush();
      });
  if (!read) return tl::unexpected(read.error());  // never: the first reading passed
  chunks.flush();
  return {};
}

}  // namespace unwindkit::sframe
