// An SFrame section in a relocatable object (`gcc -c -Wa,--gsframe`): each function start is
// a relocation in `.rela.sframe` (`R_X86_64_PC64 .text + 0x70`), which readelf 2.47 applies
// before it prints, showing `pc = 0x0, 0x70, 0x80` (issue #52, formats.md §1). The object is
// built by hand (elf_image.h) with the relocations gas writes; what readelf shows follows from
// its arithmetic: S + A - r_offset written in the field, read back as PC-relative.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "elf_image.h"
#include "sframe_builder.h"
#include "unwindkit/sframe/dump.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/unwind/modules.h"

namespace {

using namespace unwindkit;

constexpr uint64_t kFunctionStarts[] = {0x0, 0x70, 0x80};
constexpr uint32_t kFunctionSizes[] = {0x70, 0x10, 0x10};
constexpr uint64_t kFirstStartField = 28;  // header, no aux header, fdeoff 0
constexpr uint64_t kFdeSize = 16;          // v3
// Section header indices in the object below.
constexpr uint32_t kText = 1, kSframe = 2, kSymtab = 4, kStrtab = 5;
constexpr uint32_t kTextSymbol = 1;  // the section symbol of .text

void put(std::vector<uint8_t>& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// What gas 2.47 writes: v3, PCREL, every stored start 0 and a PC64 relocation against .text
// at each start field.
std::vector<uint8_t> object(uint32_t reloc_type = R_X86_64_PC64) {
  test::SectionSpec spec;
  spec.version = 3;
  spec.flags = 0x1 | 0x4;  // SORTED, FDE_FUNC_START_PCREL
  for (uint32_t size : kFunctionSizes) {
    test::FdeSpec f;
    f.size = size;
    f.fres = {{0, test::fre_info(true, 1), {8}}};
    spec.fdes.push_back(f);
  }
  const std::vector<uint8_t> text(0x90, 0xc3);
  const std::vector<uint8_t> sframe = test::build_sframe(spec);
  std::vector<uint8_t> rela;
  for (size_t i = 0; i < std::size(kFunctionStarts); ++i) {
    put(rela, kFirstStartField + i * kFdeSize, 8);                        // r_offset
    put(rela, uint64_t{kTextSymbol} << 32 | reloc_type, 8);               // r_info
    put(rela, kFunctionStarts[i], 8);                                     // r_addend
  }
  // The null symbol, then .text's (copied in place: gcc 12 takes an insert of the struct's
  // bytes for a read past it, -Warray-bounds).
  std::vector<uint8_t> symtab(2 * sizeof(Elf64_Sym), 0);
  Elf64_Sym text_symbol{};
  text_symbol.st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
  text_symbol.st_shndx = kText;
  std::memcpy(symtab.data() + sizeof(Elf64_Sym), &text_symbol, sizeof text_symbol);
  const std::vector<uint8_t> strtab(8, 0);
  const test::ImageSection sections[] = {
      {".text", text},
      {".sframe", sframe},
      {".rela.sframe", rela, SHT_RELA, kSymtab, kSframe, sizeof(Elf64_Rela)},
      {".symtab", symtab, SHT_SYMTAB, kStrtab, 2, sizeof(Elf64_Sym)},
      {".strtab", strtab, SHT_STRTAB},
  };
  return test::elf_image(EM_X86_64, sections, {}, ET_REL);
}

class SFrameRelocatableObject : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  // The object as a file, read as the CLI and both plugins read a module.
  unwind::Module module(const std::vector<uint8_t>& image) {
    path_ = std::filesystem::temp_directory_path() /
            ("uk-object-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".o");
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    return unwind::Module(path_.string(), path_.string(), {});
  }
  std::filesystem::path path_;
};

TEST_F(SFrameRelocatableObject, FunctionStartsAreTheRelocatedFields) {
  unwind::Module m = module(object());
  const auto section = m.sframe_section();
  ASSERT_TRUE(section);
  auto decoded = sframe::decode(section->bytes, section->address);
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  const std::string text = sframe::dump(*decoded);
  EXPECT_NE(text.find("func idx [0]: pc = 0x0, size = 112 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("func idx [1]: pc = 0x70, size = 16 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("func idx [2]: pc = 0x80, size = 16 bytes"), std::string::npos) << text;
  // Lookups find each function where readelf shows it.
  for (size_t i = 0; i < std::size(kFunctionStarts); ++i) {
    auto rule = m.sframe_rule(kFunctionStarts[i] + 4);
    ASSERT_TRUE(rule && rule->has_value()) << i;
    EXPECT_EQ((*rule)->func_start, kFunctionStarts[i]);
  }
}

// A type no unwind table carries is not applied as if it were another: the Error names the
// relocation section, the entry and its r_info.
TEST_F(SFrameRelocatableObject, AnUnknownRelocationTypeIsAnError) {
  auto file = elf::ElfFile::parse(
      std::make_shared<const std::vector<uint8_t>>(object(R_X86_64_GOTPCREL)), "obj.o");
  ASSERT_TRUE(file) << file.error().to_string();
  const elf::Section* sframe = file->section(".sframe");
  ASSERT_NE(sframe, nullptr);
  auto bytes = file->contents(*sframe);
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.error().section, ".rela.sframe");
  EXPECT_EQ(bytes.error().offset, 0u);
  EXPECT_EQ(bytes.error().field, "r_info");
  EXPECT_EQ(bytes.error().kind, ErrorKind::Unsupported);
}

}  // namespace
