// CoreFile on an s390x core as qemu-s390x writes one (big-endian ELF64, EM_S390, notes
// NT_PRSTATUS, NT_PRPSINFO, NT_AUXV; no NT_FILE, no FPRs). The core is made here, its
// NT_PRSTATUS laid out as the kernel's `struct elf_prstatus` with pr_reg an `s390_regs`
// (arch/s390/include/uapi/asm/ptrace.h: psw.mask, psw.addr, gprs[16], acrs[16], orig_gpr2).
#include <elf.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "unwindkit/rules.h"
#include "unwindkit/unwind/core_file.h"

namespace unwindkit::unwind {
namespace {

class BigEndianWriter {
 public:
  void put(uint64_t v, size_t size) {
    for (size_t i = size; i-- > 0;) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void pad_to(size_t n) { out_.resize(n, 0); }
  size_t size() const { return out_.size(); }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

constexpr uint64_t kPswMask = 0x0705200180000000, kPswAddr = 0x1000b86;
constexpr uint64_t kStack = 0x40007ff000;
constexpr int kPid = 4242, kSignal = 11;
constexpr size_t kPrstatusSize = 0x150;  // qemu's and the kernel's, readelf -n on a core
constexpr size_t kRegOffset = 112;       // pr_reg in `struct elf_prstatus`

uint64_t gpr(unsigned i) { return 0x1111000000000000ull * (i % 15 + 1) + i; }

std::vector<uint8_t> s390x_core() {
  BigEndianWriter desc;
  desc.pad_to(12);
  desc.put(kSignal, 2);  // pr_cursig
  desc.pad_to(32);
  desc.put(kPid, 4);  // pr_pid
  desc.pad_to(kRegOffset);
  desc.put(kPswMask, 8);
  desc.put(kPswAddr, 8);
  for (unsigned i = 0; i < 16; ++i) desc.put(gpr(i), 8);
  for (unsigned i = 0; i < 16; ++i) desc.put(0xacac0000u + i, 4);  // acrs
  desc.put(0xdeadbeef, 8);                                          // orig_gpr2
  desc.pad_to(kPrstatusSize);

  BigEndianWriter note;
  note.put(5, 4);  // "CORE\0"
  note.put(desc.size(), 4);
  note.put(NT_PRSTATUS, 4);
  for (char c : std::string("CORE\0\0\0\0", 8)) note.put(static_cast<uint8_t>(c), 1);
  note.bytes().insert(note.bytes().end(), desc.bytes().begin(), desc.bytes().end());

  const size_t phoff = sizeof(Elf64_Ehdr), notes_at = phoff + 2 * sizeof(Elf64_Phdr);
  const size_t stack_at = (notes_at + note.size() + 0xfff) & ~size_t{0xfff};
  BigEndianWriter elf;
  for (int b : {0x7f, int{'E'}, int{'L'}, int{'F'}, ELFCLASS64, ELFDATA2MSB, EV_CURRENT})
    elf.put(static_cast<uint64_t>(b), 1);
  elf.pad_to(EI_NIDENT);
  elf.put(ET_CORE, 2);
  elf.put(EM_S390, 2);
  elf.put(EV_CURRENT, 4);
  elf.put(0, 8);  // e_entry
  elf.put(phoff, 8);
  elf.put(0, 8);  // e_shoff
  elf.put(0, 4);  // e_flags
  elf.put(sizeof(Elf64_Ehdr), 2);
  elf.put(sizeof(Elf64_Phdr), 2);
  elf.put(2, 2);  // e_phnum
  elf.put(sizeof(Elf64_Shdr), 2);
  elf.put(0, 2);
  elf.put(0, 2);
  auto phdr = [&](uint32_t type, uint32_t flags, uint64_t offset, uint64_t vaddr, uint64_t size) {
    elf.put(type, 4);
    elf.put(flags, 4);
    elf.put(offset, 8);
    elf.put(vaddr, 8);
    elf.put(0, 8);  // p_paddr
    elf.put(size, 8);
    elf.put(size, 8);
    elf.put(type == PT_LOAD ? 0x1000 : 0, 8);
  };
  phdr(PT_NOTE, 0, notes_at, 0, note.size());
  phdr(PT_LOAD, PF_R | PF_W, stack_at, kStack, 0x1000);
  elf.bytes().insert(elf.bytes().end(), note.bytes().begin(), note.bytes().end());
  elf.pad_to(stack_at);
  for (size_t i = 0; i < 0x1000 / 8; ++i) elf.put(0x5151000000000000ull + i, 8);
  return elf.bytes();
}

TEST(CoreFileS390x, ThreadRegistersFromS390Regs) {
  CoreOptions o;
  o.read_mapped_files = false;
  auto core = CoreFile::parse(std::make_shared<const std::vector<uint8_t>>(s390x_core()),
                              "s390x-core", o);
  ASSERT_TRUE(core) << core.error().to_string();
  EXPECT_EQ(core->arch(), Arch::S390x);
  EXPECT_EQ(core->endian(), Endian::Big);
  ASSERT_EQ(core->threads().size(), 1u);
  const CoreThread& t = core->threads()[0];
  EXPECT_EQ(t.tid, kPid);
  EXPECT_EQ(t.signal, kSignal);
  // The PC is psw.addr (not the PSW mask before it); r0..r15 are DWARF 0..15 and the
  // access registers and orig_gpr2 after them are no general register.
  EXPECT_EQ(t.regs.pc(), kPswAddr);
  for (uint16_t i = 0; i < 16; ++i) EXPECT_EQ(t.regs.get(i), gpr(i)) << "r" << i;
  EXPECT_EQ(t.regs.sp(), gpr(reg::s390x::r15));
  EXPECT_FALSE(t.regs.get(reg::s390x::f0));  // qemu writes no FPRs
  // Big-endian memory, read as the walker reads a stack word.
  std::vector<uint8_t> word(8);
  ASSERT_TRUE(core->memory().read(kStack + 8, word));
  EXPECT_EQ(word, (std::vector<uint8_t>{0x51, 0x51, 0, 0, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace unwindkit::unwind
