#include "unwindkit/elf/section_replace.h"

#include <fmt/format.h>

#include <algorithm>

#include "layout.h"

namespace unwindkit::elf {

namespace {

using layout::align_up;
using layout::kFileAlign;
using layout::kMinPage;

// Writes integers of the file's byte order into the copy, checked against its size.
class Patcher {
 public:
  Patcher(std::vector<uint8_t>& out, Endian endian) : out_(out), endian_(endian) {}

  Result<void> put(uint64_t pos, uint64_t v, size_t width, std::string_view field) {
    if (pos > out_.size() || width > out_.size() - pos)
      return fail("ELF", pos, field, "outside the file");
    for (size_t i = 0; i < width; ++i) {
      const size_t shift = endian_ == Endian::Little ? i : width - 1 - i;
      out_[pos + i] = static_cast<uint8_t>(v >> (8 * shift));
    }
    return {};
  }

 private:
  std::vector<uint8_t>& out_;
  Endian endian_;
};

}  // namespace

uint64_t end_of_loaded_image(const ElfFile& file) {
  uint64_t end = 0, page = kMinPage;
  for (const Segment& seg : file.segments()) {
    if (seg.type != kSegmentLoad) continue;
    end = std::max(end, seg.vaddr + seg.memsz);
    page = std::max(page, seg.align);
  }
  return align_up(end, page);
}

Result<std::vector<uint8_t>> replace_section(const ElfFile& file, std::string_view name,
                                             Bytes data, uint64_t address) {
  if (!file.is_64()) return fail("ELF", 0, "e_ident", "only ELF64 files can be rewritten");
  const Section* target = file.section(name);
  if (target == nullptr || target->type == kSectionNoBits)
    return fail("ELF", 0, "section headers", fmt::format("no {} section with contents", name));

  const Bytes image = file.image();
  const ByteReader eh(image, file.endian(), "ELF");
  auto shoff = eh.uint_at(kOffShoff64, 8, "e_shoff");
  if (!shoff) return tl::unexpected(shoff.error());
  auto shentsize = eh.uint_at(kOffShentsize64, 2, "e_shentsize");
  if (!shentsize) return tl::unexpected(shentsize.error());
  auto shnum = eh.uint_at(kOffShnum64, 2, "e_shnum");
  if (!shnum) return tl::unexpected(shnum.error());
  // Extended numbering (e_shnum 0, the count in section 0) is not worth handling here.
  if (*shentsize != kShdrSize64 || *shnum == 0 || target->index >= *shnum)
    return eh.error_at(kOffShnum64, "e_shnum",
                       "unexpected section header table shape");
  const uint64_t table_size = *shnum * *shentsize;
  auto table = eh.sub(static_cast<size_t>(std::min<uint64_t>(*shoff, image.size() + 1)),
                      static_cast<size_t>(table_size), "e_shoff");
  if (!table) return tl::unexpected(table.error());

  std::vector<uint8_t> out(image.begin(), image.end());
  const uint64_t data_at = align_up(out.size(), std::max<uint64_t>(kFileAlign, target->addralign));
  out.resize(data_at);
  out.insert(out.end(), data.begin(), data.end());
  const uint64_t table_at = align_up(out.size(), kFileAlign);
  out.resize(table_at);
  out.insert(out.end(), table->data().begin(), table->data().end());

  Patcher p(out, file.endian());
  const uint64_t entry = table_at + uint64_t{target->index} * kShdrSize64;
  for (auto r : {p.put(kOffShoff64, table_at, 8, "e_shoff"),
                 p.put(entry + kOffShAddr64, address, 8, "sh_addr"),
                 p.put(entry + kOffShOffset64, data_at, 8, "sh_offset"),
                 p.put(entry + kOffShSize64, data.size(), 8, "sh_size")})
    if (!r) return tl::unexpected(r.error());
  return out;
}

}  // namespace unwindkit::elf
