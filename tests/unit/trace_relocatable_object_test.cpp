// A `.trace` section in a relocatable object (`icx -traceback -c`): each HDR's base PC and
// each RTN64's start PC is an address the compiler leaves to `.rela.trace` (R_X86_64_64
// against the routine's section or symbol), the field itself 0. readelf --relocated-dump
// shows the section with S + A written in (the section's address, 0 in an object, takes no
// part), and that is what every reader must decode (issue #52: sections read from ET_REL
// files). The routines are notes §3's 199-byte module (trace_vectors.h) placed at .text's
// start, so the lines each address maps to are that vector's.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "elf_image.h"
#include "trace_vectors.h"
#include "unwindkit/elf/elf_file.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/elf_section.h"
#include "unwindkit/trace/lookup.h"

namespace {

using namespace unwindkit;
using trace::test::B;

// Section header indices in the object below; symbols in its .symtab.
constexpr uint32_t kText = 1, kTrace = 2, kSymtab = 4, kStrtab = 5;
constexpr uint32_t kTextSymbol = 1, kSubr2Symbol = 2;
constexpr uint64_t kSubr1 = 0x30, kSubr2 = 0x70, kCodeSize = 0x8e;
constexpr size_t kHdrBaseField = 8;   // type, major, minor, length
constexpr size_t kRtnStartField = 4;  // type, pad, name length

struct Reloc {
  uint64_t offset;
  uint32_t symbol;
  int64_t addend;
};

// The module with every address field 0, and the relocations gas would write for it: the HDR
// and main at .text + 0, subr1 at .text + 0x30, subr2 through its own symbol (value 0x70).
std::vector<uint8_t> object() {
  const B module = trace::test::module199();  // at kBegin: only its layout is used
  auto decoded = trace::decode(module, 8);
  EXPECT_TRUE(decoded) << decoded.error().to_string();
  B zeroed = module;
  std::vector<Reloc> relocs = {{kHdrBaseField, kTextSymbol, 0}};
  const std::vector<std::pair<uint32_t, int64_t>> targets = {
      {kTextSymbol, 0}, {kTextSymbol, kSubr1}, {kSubr2Symbol, 0}};
  size_t next = 0;
  for (const auto& r : decoded->records) {
    if (r.kind != trace::RecordKind::Routine) continue;
    relocs.push_back({r.offset + kRtnStartField, targets.at(next).first, targets.at(next).second});
    ++next;
  }
  for (const Reloc& r : relocs) std::memset(zeroed.data() + r.offset, 0, 8);
  B rela;
  for (const Reloc& r : relocs) {
    trace::test::le(rela, r.offset, 8);
    trace::test::le(rela, uint64_t{r.symbol} << 32 | R_X86_64_64, 8);
    trace::test::le(rela, static_cast<uint64_t>(r.addend), 8);
  }
  std::vector<uint8_t> symtab(3 * sizeof(Elf64_Sym), 0);
  Elf64_Sym text{}, subr2{};
  text.st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
  text.st_shndx = kText;
  subr2.st_name = 1;
  subr2.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
  subr2.st_shndx = kText;
  subr2.st_value = kSubr2;
  std::memcpy(symtab.data() + sizeof(Elf64_Sym), &text, sizeof text);
  std::memcpy(symtab.data() + 2 * sizeof(Elf64_Sym), &subr2, sizeof subr2);
  const std::string strtab("\0subr2\0", 7);
  const std::vector<uint8_t> strtab_bytes(strtab.begin(), strtab.end());
  const std::vector<uint8_t> code(kCodeSize, 0x90);
  const test::ImageSection sections[] = {
      {".text", code},
      {".trace", zeroed},
      {".rela.trace", rela, SHT_RELA, kSymtab, kTrace, sizeof(Elf64_Rela)},
      {".symtab", symtab, SHT_SYMTAB, kStrtab, 2, sizeof(Elf64_Sym)},
      {".strtab", strtab_bytes, SHT_STRTAB},
  };
  return test::elf_image(EM_X86_64, sections, {}, ET_REL);
}

TEST(TraceRelocatableObject, AddressesAreTheRelocatedFields) {
  auto file = elf::ElfFile::parse(std::make_shared<const std::vector<uint8_t>>(object()), "t.o");
  ASSERT_TRUE(file) << file.error().to_string();
  const elf::Section* s = file->section(".trace");
  ASSERT_NE(s, nullptr);
  auto bytes = trace::section_bytes(*file, *s);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  auto decoded = trace::decode(*bytes, 8);
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  ASSERT_EQ(decoded->modules.size(), 1u);
  const trace::Module& m = decoded->modules[0];
  EXPECT_EQ(m.code_begin, 0u);
  ASSERT_EQ(m.routines.size(), 3u);
  EXPECT_EQ(m.routines[0].start, 0u);
  EXPECT_EQ(m.routines[1].start, kSubr1);
  EXPECT_EQ(m.routines[2].start, kSubr2);
  // The vector's lines, at .text offsets: subr1 line 10 from 0x30, subr2 line 5 at 0x7b.
  auto subr1 = trace::lookup(*decoded, kSubr1 + 4);
  ASSERT_TRUE(subr1);
  EXPECT_EQ(subr1->routine, "subr1");
  EXPECT_EQ(subr1->line, 10);
  EXPECT_EQ(subr1->begin, kSubr1);
  auto subr2 = trace::lookup(*decoded, 0x7b);
  ASSERT_TRUE(subr2);
  EXPECT_EQ(subr2->routine, "subr2");
  EXPECT_EQ(subr2->line, 5);
  EXPECT_EQ(subr2->routine_start, kSubr2);
}

}  // namespace
