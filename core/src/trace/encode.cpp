#include "unwindkit/trace/encode.h"

#include <fmt/format.h>

#include <limits>

#include "unwindkit/trace/constants.h"

namespace unwindkit::trace {
namespace {

class Writer {
 public:
  explicit Writer(unsigned pointer_size) : p_(pointer_size) {}

  void u8(uint64_t v) { out_.push_back(static_cast<uint8_t>(v)); }
  void le(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void str16(const std::string& s) {
    le(s.size(), 2);
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void align() {
    while (out_.size() % p_ != 0) out_.push_back(kTagPadding);
  }
  size_t size() const { return out_.size(); }
  void patch_u32(size_t at, uint32_t v) {
    for (unsigned i = 0; i < 4; ++i) out_[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  std::vector<uint8_t> take() { return std::move(out_); }

  void routine(const std::string& name, uint64_t start) {
    align();
    u8(p_ == 8 ? kTagRoutine64 : kTagRoutine32);
    u8(kRoutinePad);
    le(name.size(), 2);
    le(start, p_);
    out_.insert(out_.end(), name.begin(), name.end());
  }

  // The shortest records for "line += d over the next p bytes".
  void correlation(int64_t d, uint64_t p) {
    if (d == 1 && p <= kCoMaxPcDelta) {
      u8(kTagCo1 | (p - 1));
    } else if (d >= INT8_MIN && d <= INT8_MAX && p <= kCoMaxPcDelta) {
      u8(kTagCo2 | (p - 1));
      u8(static_cast<uint64_t>(d));
    } else {
      if (d >= INT8_MIN && d <= INT8_MAX) {
        u8(kTagLine1);
        le(static_cast<uint64_t>(d), 1);
      } else if (d >= INT16_MIN && d <= INT16_MAX) {
        u8(kTagLine2);
        le(static_cast<uint64_t>(d), 2);
      } else {
        u8(kTagLine4);
        le(static_cast<uint64_t>(d), 4);
      }
      const uint64_t stored = p - 1;
      if (stored <= 0xff) {
        u8(kTagPc1);
        le(stored, 1);
      } else if (stored <= 0xffff) {
        u8(kTagPc2);
        le(stored, 2);
      } else {
        u8(kTagPc4);
        le(stored, 4);
      }
    }
  }

 private:
  unsigned p_;
  std::vector<uint8_t> out_;
};

}  // namespace

Result<std::vector<uint8_t>> encode(std::span<const ModuleLines> modules, unsigned pointer_size) {
  if (pointer_size != 4 && pointer_size != 8)
    return fail(kSectionName, 0, "pointer_size", fmt::format("{} (4 or 8)", pointer_size));
  Writer w(pointer_size);
  for (size_t mi = 0; mi < modules.size(); ++mi) {
    const ModuleLines& m = modules[mi];
    w.align();
    const size_t hdr = w.size();
    w.u8(kTagHeader);
    w.le(kMajorVersion, 2);
    w.u8(kMinorVersion);
    w.le(0, 4);  // size, patched below
    w.le(m.code_begin, pointer_size);
    w.le(m.files.size(), 4);
    w.le(m.code_size, 4);
    w.str16("");  // module name: empty in practice (notes §3)
    for (const std::string& f : m.files) w.str16(f);
    int64_t line = 0;
    uint32_t file = 0;
    for (const RoutineLines& r : m.routines) {
      uint64_t pc = 0;
      for (size_t i = 0; i < r.lines.size(); ++i) {
        const LineEntry& e = r.lines[i];
        const std::string where = fmt::format("module[{}].{}[{}]", mi, r.name, i);
        if (e.end <= e.begin || e.end - e.begin > uint64_t{1} << 32)
          return fail(kSectionName, w.size(), where,
                      fmt::format("range [{:#x}, {:#x}) is empty or longer than 4 GiB", e.begin,
                                  e.end));
        if (e.file >= m.files.size())
          return fail(kSectionName, w.size(), where, fmt::format("file index {}", e.file));
        const int64_t d = e.line - line;
        if (d < std::numeric_limits<int32_t>::min() || d > std::numeric_limits<int32_t>::max())
          return fail(kSectionName, w.size(), where, fmt::format("line delta {}", d));
        // As Intel's compilers do, a file switch at a routine's start precedes its RTN.
        const bool new_routine = i == 0 || e.begin != pc;
        if (e.file != file && new_routine) {
          w.u8(kTagFile);
          w.le(e.file, 4);
          file = e.file;
        }
        if (new_routine) w.routine(r.name, e.begin);  // a gap restarts the routine there
        if (e.file != file) {
          w.u8(kTagFile);
          w.le(e.file, 4);
          file = e.file;
        }
        w.correlation(d, e.end - e.begin);
        line = e.line;
        pc = e.end;
      }
    }
    const size_t size = w.size() - hdr;
    if (size > std::numeric_limits<uint32_t>::max())
      return fail(kSectionName, hdr + 4, "HDR.size", "module larger than 4 GiB");
    w.patch_u32(hdr + 4, static_cast<uint32_t>(size));
  }
  return w.take();
}

}  // namespace unwindkit::trace
