// Rewritten ELF copies as pieces (elf/file_pieces.h), and the two rewriters that make them,
// read back by libelf rather than by our own ELF reader.
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "elf_image.h"
#include "unwindkit/elf/constants.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/elf/file_pieces.h"
#include "unwindkit/elf/section_replace.h"
#include "unwindkit/elf/segment_add.h"

namespace unwindkit::elf {
namespace {

std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

TEST(FilePieces, InputOwnBytesAndZerosComeInOrder) {
  const std::vector<uint8_t> input = bytes_of("abcdef");
  FilePieces pieces;
  pieces.input(Bytes(input).subspan(1, 3));  // "bcd"
  pieces.zeros_to(5);
  pieces.own(bytes_of("xy"));
  pieces.zeros_to(4);  // already longer: nothing
  pieces.input({});
  pieces.own({});
  EXPECT_EQ(pieces.size(), 7u);
  EXPECT_EQ(pieces.whole(), (std::vector<uint8_t>{'b', 'c', 'd', 0, 0, 'x', 'y'}));

  // Bytes and zeros to their own callbacks, in order, until one says stop.
  std::vector<std::string> seen;
  const auto bytes = [&seen](Bytes b) {
    seen.push_back(std::string(b.begin(), b.end()));
    return true;
  };
  const auto zeros = [&seen](uint64_t n) {
    seen.push_back(std::to_string(n) + " zeros");
    return seen.size() < 2;
  };
  EXPECT_FALSE(pieces.write(bytes, zeros));
  EXPECT_EQ(seen, (std::vector<std::string>{"bcd", "2 zeros"}));
  seen.clear();
  EXPECT_TRUE(pieces.write(bytes, [&seen](uint64_t n) {
    seen.push_back(std::to_string(n) + " zeros");
    return true;
  }));
  EXPECT_EQ(seen, (std::vector<std::string>{"bcd", "2 zeros", "xy"}));
}

TEST(FilePieces, LongRunsOfZerosAreWholeAndZero) {
  FilePieces pieces;
  pieces.own(bytes_of("a"));
  pieces.zeros_to(200'001);
  const std::vector<uint8_t> whole = pieces.whole();
  ASSERT_EQ(whole.size(), 200'001u);
  EXPECT_EQ(whole[0], 'a');
  EXPECT_EQ(std::accumulate(whole.begin() + 1, whole.end(), uint64_t{0}), 0u);
}

// What libelf reads of an ELF image: each section's name, address and bytes, and the program
// headers.
struct LibelfView {
  struct Section {
    std::string name;
    uint64_t addr = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<Section> sections;
  std::vector<GElf_Phdr> segments;

  const Section* section(std::string_view name) const {
    for (const Section& s : sections)
      if (s.name == name) return &s;
    return nullptr;
  }
};

std::optional<LibelfView> libelf_view(std::vector<uint8_t>& image) {
  elf_version(EV_CURRENT);
  Elf* e = elf_memory(reinterpret_cast<char*>(image.data()), image.size());
  if (e == nullptr) return std::nullopt;
  LibelfView view;
  size_t shstrndx = 0, phnum = 0;
  bool ok = elf_getshdrstrndx(e, &shstrndx) == 0 && elf_getphdrnum(e, &phnum) == 0;
  for (Elf_Scn* scn = nullptr; ok && (scn = elf_nextscn(e, scn)) != nullptr;) {
    GElf_Shdr sh;
    Elf_Data* data = nullptr;
    const char* name = nullptr;
    ok = gelf_getshdr(scn, &sh) != nullptr &&
         (name = elf_strptr(e, shstrndx, sh.sh_name)) != nullptr &&
         (data = elf_rawdata(scn, nullptr)) != nullptr;
    if (!ok) break;
    const auto* b = static_cast<const uint8_t*>(data->d_buf);
    view.sections.push_back({name, sh.sh_addr, {b, b + data->d_size}});
  }
  for (size_t i = 0; ok && i < phnum; ++i) {
    GElf_Phdr ph;
    ok = gelf_getphdr(e, static_cast<int>(i), &ph) != nullptr;
    view.segments.push_back(ph);
  }
  elf_end(e);
  if (!ok) return std::nullopt;
  return view;
}

// A program whose one PT_LOAD holds .eh_frame and .comment; .shstrtab and the section headers
// follow, not loaded (a new loaded section moves them up, and libelf must still find names).
struct Program {
  std::vector<uint8_t> eh_frame = bytes_of("eh frame bytes");
  std::vector<uint8_t> comment = bytes_of("a comment");
  std::optional<ElfFile> file;

  Program() {
    const test::ImageSection sections[] = {{".eh_frame", eh_frame}, {".comment", comment}};
    auto image = test::elf_image(EM_X86_64, sections);
    auto parsed =
        ElfFile::parse(std::make_shared<const std::vector<uint8_t>>(std::move(image)), "prog");
    if (parsed) file = std::move(*parsed);
  }
};

TEST(ElfRewrites, ANewLoadedSectionIsWhereThePlanPutItAndTheRestIsKept) {
  const Program prog;
  ASSERT_TRUE(prog.file);
  auto plan = plan_loaded_section(*prog.file, kSegmentGnuSFrame);
  ASSERT_TRUE(plan) << plan.error().to_string();
  const std::vector<uint8_t> sframe = bytes_of("new section's bytes");
  auto pieces = add_loaded_section(*prog.file, *plan, ".sframe", kSegmentGnuSFrame, sframe);
  ASSERT_TRUE(pieces) << pieces.error().to_string();
  std::vector<uint8_t> copy = pieces->whole();
  EXPECT_EQ(copy.size(), pieces->size());

  auto view = libelf_view(copy);
  ASSERT_TRUE(view);
  const LibelfView::Section* added = view->section(".sframe");
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->addr, plan->address);
  EXPECT_EQ(added->bytes, sframe);
  ASSERT_NE(view->section(".eh_frame"), nullptr);
  EXPECT_EQ(view->section(".eh_frame")->bytes, prog.eh_frame);
  ASSERT_NE(view->section(".comment"), nullptr);
  EXPECT_EQ(view->section(".comment")->bytes, prog.comment);

  // The new PT_LOAD holds the program headers and the section; PT_GNU_SFRAME names it.
  size_t loads = 0, named = 0;
  for (const GElf_Phdr& ph : view->segments) {
    if (ph.p_type == PT_LOAD && ph.p_vaddr == plan->segment_vaddr) {
      ++loads;
      EXPECT_EQ(ph.p_offset, plan->segment_offset);
      EXPECT_GE(ph.p_vaddr + ph.p_memsz, plan->address + sframe.size());
    }
    if (ph.p_type == kSegmentGnuSFrame) {
      ++named;
      EXPECT_EQ(ph.p_vaddr, plan->address);
      EXPECT_EQ(ph.p_filesz, sframe.size());
      EXPECT_EQ(ph.p_offset, plan->data_offset);
    }
  }
  EXPECT_EQ(loads, 1u);
  EXPECT_EQ(named, 1u);
}

TEST(ElfRewrites, AReplacedSectionHasTheNewBytesAndTheOldOnesStay) {
  const Program prog;
  ASSERT_TRUE(prog.file);
  const std::vector<uint8_t> replacement = bytes_of("replacement .eh_frame, longer than it was");
  constexpr uint64_t kAddress = 0x900000;
  auto pieces = replace_section(*prog.file, ".eh_frame", replacement, kAddress);
  ASSERT_TRUE(pieces) << pieces.error().to_string();
  std::vector<uint8_t> copy = pieces->whole();
  const Bytes input = prog.file->image();
  ASSERT_GT(copy.size(), input.size());
  // Of what was there, only e_shoff changes.
  for (size_t i = 0; i < input.size(); ++i) {
    if (i >= kOffShoff64 && i < kOffShoff64 + 8) continue;
    ASSERT_EQ(copy[i], input[i]) << "byte " << i;
  }

  auto view = libelf_view(copy);
  ASSERT_TRUE(view);
  const LibelfView::Section* replaced = view->section(".eh_frame");
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(replaced->addr, kAddress);
  EXPECT_EQ(replaced->bytes, replacement);
  ASSERT_NE(view->section(".comment"), nullptr);
  EXPECT_EQ(view->section(".comment")->bytes, prog.comment);
}

// An alignment no file needs, where aligning the data's offset would wrap around, is refused
// and named, not written as a short or a huge copy.
TEST(ElfRewrites, AHostileAlignmentIsRefused) {
  const std::vector<uint8_t> eh_frame = bytes_of("eh frame bytes");
  const test::ImageSection sections[] = {{".eh_frame", eh_frame}};
  auto image = test::elf_image(EM_X86_64, sections);
  Elf64_Ehdr eh;
  std::memcpy(&eh, image.data(), sizeof eh);
  const size_t addralign = eh.e_shoff + sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_addralign);
  const uint64_t hostile = uint64_t{1} << 63;
  std::memcpy(image.data() + addralign, &hostile, sizeof hostile);
  auto file = ElfFile::parse(std::make_shared<const std::vector<uint8_t>>(image), "hostile");
  ASSERT_TRUE(file) << file.error().to_string();
  auto pieces = replace_section(*file, ".eh_frame", eh_frame, 0x900000);
  ASSERT_FALSE(pieces);
  EXPECT_EQ(pieces.error().field, "sh_addralign");
  EXPECT_EQ(pieces.error().offset, addralign);
}

}  // namespace
}  // namespace unwindkit::elf
