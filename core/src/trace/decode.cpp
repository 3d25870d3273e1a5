// The `.trace` interpreter (notes §3): line resets to 0 at each HDR only, the PC is set to
// the routine start at each RTN, the file is index 0 until a FIL; a line record sets the
// current line and the PC record after it gives the length of the range for that line.
#include "unwindkit/trace/decode.h"

#include <fmt/format.h>

#include <algorithm>

#include "unwindkit/trace/constants.h"

namespace unwindkit::trace {
namespace {

class Decoder {
 public:
  // `collect`: record every problem and read on (validate); otherwise stop at the first.
  Decoder(Bytes bytes, unsigned pointer_size, bool collect)
      : bytes_(bytes), collect_(collect) {
    section_.pointer_size = pointer_size;
  }

  // False when stopped by a problem in non-collecting mode.
  bool run() {
    ByteReader r(bytes_, Endian::Little, kSectionName);
    while (!r.at_end()) {
      const uint8_t tag = r.data()[r.pos()];
      if (tag == kTagPadding) {
        padding(r, r.size(), last_module());
      } else if (tag == kTagHeader) {
        if (!module(r)) return false;
      } else {
        if (!problem(r.error("tag", fmt::format("{:#04x} where a HDR (0x0a) or padding was "
                                                "expected", tag)).value()))
          return false;
        (void)r.skip(1, "tag");
      }
    }
    std::stable_sort(section_.rows.begin(), section_.rows.end(),
                     [](const Row& a, const Row& b) { return a.begin < b.begin; });
    return true;
  }

  Section& section() { return section_; }
  std::vector<Error>& problems() { return problems_; }

 private:
  uint32_t last_module() const {
    return section_.modules.empty() ? kNone : static_cast<uint32_t>(section_.modules.size() - 1);
  }

  bool problem(Error e) {
    problems_.push_back(std::move(e));
    return collect_;
  }

  // A run of zero bytes up to `end` (a position in `r`), as one Padding record.
  void padding(ByteReader& r, size_t end, uint32_t module_index) {
    Record rec;
    rec.kind = RecordKind::Padding;
    rec.offset = r.table_offset();
    rec.module = module_index;
    size_t p = r.pos();
    while (p < end && r.data()[p] == kTagPadding) ++p;
    rec.size = p - r.pos();
    (void)r.seek(p, "padding");
    section_.records.push_back(rec);
  }

  bool module(ByteReader& r) {
    const size_t start = r.pos();
    const uint32_t index = static_cast<uint32_t>(section_.modules.size());
    Module m;
    m.offset = r.table_offset();
    Record hdr;
    hdr.kind = RecordKind::Header;
    hdr.tag = kTagHeader;
    hdr.offset = m.offset;
    hdr.module = index;
    (void)r.skip(1, "HDR.tag");
    uint32_t file_count = 0;
    auto fixed = [&]() -> Result<void> {
      auto major = r.u16("HDR.major");
      if (!major) return tl::unexpected(major.error());
      auto minor = r.u8("HDR.minor");
      if (!minor) return tl::unexpected(minor.error());
      auto size = r.u32("HDR.size");
      if (!size) return tl::unexpected(size.error());
      auto begin = r.uint(section_.pointer_size, "HDR.code_begin");
      if (!begin) return tl::unexpected(begin.error());
      auto files = r.u32("HDR.file_count");
      if (!files) return tl::unexpected(files.error());
      auto code = r.u32("HDR.code_size");
      if (!code) return tl::unexpected(code.error());
      m.major = *major;
      m.minor = *minor;
      m.size = *size;
      m.code_begin = *begin;
      m.code_size = *code;
      file_count = *files;
      return {};
    }();
    if (!fixed) {
      problem(fixed.error());
      return false;  // without its size, nothing after a cut header can be placed
    }
    size_t end = start + m.size;
    if (const size_t fixed_len = r.pos() - start; m.size < fixed_len + 2) {
      // Too small to hold its own header: the module cannot end before the section does.
      if (!problem(Error{kSectionName, m.offset + 4, "HDR.size",
                         fmt::format("{:#x} bytes, less than the header", m.size)}))
        return false;
      end = r.size();
    } else if (m.size > r.size() - start) {
      if (!problem(Error{kSectionName, m.offset + 4, "HDR.size",
                         fmt::format("{:#x} bytes, but only {:#x} remain in the section", m.size,
                                     r.size() - start)}))
        return false;
      end = r.size();
    }
    if (m.major != kMajorVersion &&
        !problem(Error{kSectionName, m.offset + 1, "HDR.major",
                       fmt::format("version {}.{} (this reader knows {}.{})", m.major, m.minor,
                                   kMajorVersion, kMinorVersion)}))
      return false;
    // The module's names and records are read through a reader that ends where it ends.
    ByteReader mr = r.sub(0, end, "HDR.size").value();
    (void)mr.seek(r.pos(), "HDR");
    auto names = [&]() -> Result<void> {
      auto len = mr.u16("HDR.module_name_length");
      if (!len) return tl::unexpected(len.error());
      auto name = mr.bytes(*len, "HDR.module_name");
      if (!name) return tl::unexpected(name.error());
      m.name.assign(name->begin(), name->end());
      // Each name takes at least its 2-byte length, so a bad count fails within the module.
      for (uint32_t i = 0; i < file_count; ++i) {
        const std::string field = fmt::format("HDR.file[{}]", i);
        auto flen = mr.u16(field);
        if (!flen) return tl::unexpected(flen.error());
        auto fname = mr.bytes(*flen, field);
        if (!fname) return tl::unexpected(fname.error());
        m.files.emplace_back(fname->begin(), fname->end());
      }
      return {};
    }();
    hdr.size = mr.pos() - start;
    section_.records.push_back(hdr);
    section_.modules.push_back(std::move(m));
    bool ok = true;
    if (!names)
      ok = problem(names.error());  // the records cannot be told from the names: skip them
    else
      ok = records(mr, end, index);
    (void)r.seek(end, "HDR.size");
    return ok;
  }

  bool records(ByteReader& r, size_t end, uint32_t index) {
    Module& m = section_.modules[index];
    int64_t line = 0;
    uint64_t pc = 0;
    uint32_t file = 0, routine = kNone;
    while (r.pos() < end) {
      const size_t at = r.pos();
      const uint8_t tag = r.data()[at];
      if (tag == kTagPadding) {
        padding(r, end, index);
        continue;
      }
      Record rec;
      rec.tag = tag;
      rec.offset = r.table_offset();
      rec.module = index;
      (void)r.skip(1, "tag");
      Result<void> ok{};
      if ((tag & kCoTagMask) == kTagCo1 || (tag & kCoTagMask) == kTagCo2) {
        rec.kind = (tag & kCoTagMask) == kTagCo1 ? RecordKind::Co1 : RecordKind::Co2;
        rec.pc_delta = (tag & kCoPcMask) + 1u;
        if (rec.kind == RecordKind::Co1) {
          rec.line_delta = 1;
        } else if (auto d = r.i8("CO2.line_delta")) {
          rec.line_delta = *d;
        } else {
          ok = tl::unexpected(d.error());
        }
      } else if (tag == kTagLine1 || tag == kTagLine2 || tag == kTagLine4) {
        rec.kind = RecordKind::Line;
        const size_t w = tag == kTagLine1 ? 1 : tag == kTagLine2 ? 2 : 4;
        if (auto d = r.sint(w, "LN.line_delta"))
          rec.line_delta = *d;
        else
          ok = tl::unexpected(d.error());
      } else if (tag == kTagPc1 || tag == kTagPc2 || tag == kTagPc4) {
        rec.kind = RecordKind::Pc;
        const size_t w = tag == kTagPc1 ? 1 : tag == kTagPc2 ? 2 : 4;
        if (auto d = r.uint(w, "PC.pc_delta"))
          rec.pc_delta = *d + 1;
        else
          ok = tl::unexpected(d.error());
      } else if (tag == kTagFile) {
        rec.kind = RecordKind::File;
        const uint64_t index_at = r.table_offset();
        if (auto f = r.u32("FIL.file_index")) {
          rec.file_index = *f;
          if (*f >= m.files.size() &&
              !problem(Error{kSectionName, index_at, "FIL.file_index",
                             fmt::format("file {} of a module with {} files", *f,
                                         m.files.size())}))
            return false;
        } else {
          ok = tl::unexpected(f.error());
        }
      } else if (tag == kTagRoutine32 || tag == kTagRoutine64) {
        rec.kind = RecordKind::Routine;
        ok = routine_record(r, tag, rec);
      } else {
        if (!problem(r.error_at(at, "tag", fmt::format("unknown record tag {:#04x}", tag))
                         .value()))
          return false;
        continue;  // read on from the next byte
      }
      if (!ok) {
        problem(ok.error());
        return false;  // a record cut by the module's end: nothing after it can be placed
      }
      rec.size = r.pos() - at;
      switch (rec.kind) {
        case RecordKind::Routine:
          rec.routine = static_cast<uint32_t>(m.routines.size());
          m.routines.push_back(Routine{rec.name, rec.start_pc, rec.offset});
          routine = rec.routine;
          pc = rec.start_pc;
          break;
        case RecordKind::File: file = rec.file_index; break;
        case RecordKind::Line: line += rec.line_delta; break;
        case RecordKind::Co1:
        case RecordKind::Co2: line += rec.line_delta; [[fallthrough]];
        case RecordKind::Pc:
          rec.pc = pc;
          section_.rows.push_back(Row{pc, pc + rec.pc_delta, line, index, file, routine,
                                      rec.offset});
          pc += rec.pc_delta;
          break;
        default: break;
      }
      rec.line = line;
      section_.records.push_back(std::move(rec));
    }
    return true;
  }

  Result<void> routine_record(ByteReader& r, uint8_t tag, Record& rec) {
    const bool wide = tag == kTagRoutine64;
    const unsigned align = wide ? kRoutine64Align : kRoutine32Align;
    const uint64_t at = rec.offset;
    if (at % align != 0 && collect_)
      problems_.push_back(Error{kSectionName, at, wide ? "RTN64" : "RTN32",
                                fmt::format("not aligned to {} bytes", align)});
    auto pad = r.u8("RTN.pad");
    if (!pad) return tl::unexpected(pad.error());
    if (*pad != kRoutinePad && collect_)
      problems_.push_back(Error{kSectionName, at + 1, "RTN.pad",
                                fmt::format("{:#04x} (should be 0)", *pad)});
    auto len = r.u16("RTN.name_length");
    if (!len) return tl::unexpected(len.error());
    auto start = r.uint(wide ? 8 : 4, "RTN.start_pc");
    if (!start) return tl::unexpected(start.error());
    auto name = r.bytes(*len, "RTN.name");
    if (!name) return tl::unexpected(name.error());
    rec.start_pc = *start;
    rec.name.assign(name->begin(), name->end());
    return {};
  }

  Bytes bytes_;
  bool collect_;
  Section section_;
  std::vector<Error> problems_;
};

// Checks that need the whole decoded module: ranges inside the HDR's code range.
void check_ranges(const Section& s, std::vector<Error>& out) {
  for (const Row& row : s.rows) {
    const Module& m = s.modules[row.module];
    if (row.begin < m.code_begin || row.end > m.code_begin + m.code_size)
      out.push_back(Error{kSectionName, row.record_offset, "range",
                          fmt::format("[{:#x}, {:#x}) is outside the module's code [{:#x}, {:#x})",
                                      row.begin, row.end, m.code_begin,
                                      m.code_begin + m.code_size)});
  }
}

}  // namespace

Result<Section> decode(Bytes bytes, unsigned pointer_size) {
  if (pointer_size != 4 && pointer_size != 8)
    return fail(kSectionName, 0, "pointer_size", fmt::format("{} (4 or 8)", pointer_size));
  Decoder d(bytes, pointer_size, /*collect=*/false);
  const bool ok = d.run();
  // In this mode only structural problems stop the decoder; a version mismatch is noted
  // but the records are still read, so the first problem decides.
  if (!ok || !d.problems().empty()) return tl::unexpected(d.problems().front());
  return std::move(d.section());
}

std::vector<Error> validate(Bytes bytes, unsigned pointer_size) {
  if (pointer_size != 4 && pointer_size != 8)
    return {Error{kSectionName, 0, "pointer_size", fmt::format("{} (4 or 8)", pointer_size)}};
  Decoder d(bytes, pointer_size, /*collect=*/true);
  d.run();
  std::vector<Error> out = std::move(d.problems());
  check_ranges(d.section(), out);
  std::stable_sort(out.begin(), out.end(),
                   [](const Error& a, const Error& b) { return a.offset < b.offset; });
  return out;
}

}  // namespace unwindkit::trace
