#include "unwindkit/elf/section_replace.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "layout.h"

namespace unwindkit::elf {

namespace {

using layout::align_up;
using layout::kFileAlign;
using layout::kMinPage;

// Writes integers of the file's byte order into `bytes`, the copy's bytes from file offset
// `at`, checked against their size.
class Patcher {
 public:
  Patcher(std::vector<uint8_t>& bytes, uint64_t at, Endian endian)
      : bytes_(bytes), at_(at), endian_(endian) {}

  Result<void> put(uint64_t pos, uint64_t v, size_t width, std::string_view field) {
    if (pos < at_ || pos - at_ > bytes_.size() || width > bytes_.size() - (pos - at_))
      return fail("ELF", pos, field, "outside the file");
    for (size_t i = 0; i < width; ++i) {
      const size_t shift = endian_ == Endian::Little ? i : width - 1 - i;
      bytes_[pos - at_ + i] = static_cast<uint8_t>(v >> (8 * shift));
    }
    return {};
  }

 private:
  std::vector<uint8_t>& bytes_;
  uint64_t at_;
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

Result<FilePieces> replace_section(const ElfFile& file, std::string_view name, Bytes data,
                                   uint64_t address) {
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

  auto header = eh.sub(0, kEhdrSize64, "e_ident");
  if (!header) return tl::unexpected(header.error());

  // The file as it was but for e_shoff, then the data, then the new section header table.
  if (target->addralign > layout::kMaxAlign)
    return eh.error_at(static_cast<size_t>(*shoff + uint64_t{target->index} * kShdrSize64 +
                                           kOffShAddralign64),
                       "sh_addralign", "alignment past 4 GiB");
  const uint64_t data_align = std::max<uint64_t>(kFileAlign, target->addralign);
  const uint64_t data_at = align_up(image.size(), data_align);
  const uint64_t table_at = align_up(data_at + data.size(), kFileAlign);
  std::vector<uint8_t> new_header(header->data().begin(), header->data().end());
  std::vector<uint8_t> new_table(table->data().begin(), table->data().end());
  Patcher h(new_header, 0, file.endian()), t(new_table, table_at, file.endian());
  const uint64_t entry = table_at + uint64_t{target->index} * kShdrSize64;
  for (auto r : {h.put(kOffShoff64, table_at, 8, "e_shoff"),
                 t.put(entry + kOffShAddr64, address, 8, "sh_addr"),
                 t.put(entry + kOffShOffset64, data_at, 8, "sh_offset"),
                 t.put(entry + kOffShSize64, data.size(), 8, "sh_size")})
    if (!r) return tl::unexpected(r.error());
  FilePieces out;
  out.own(std::move(new_header));
  out.input(image.subspan(kEhdrSize64));
  out.zeros_to(data_at);
  out.input(data);
  out.zeros_to(table_at);
  out.own(std::move(new_table));
  return out;
}

}  // namespace unwindkit::elf
