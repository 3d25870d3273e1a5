#include "unwindkit/dwarf/cfi.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <fmt/format.h>
#include <libelf.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "cfi_entries.h"
#include "unwindkit/dwarf/lower.h"
#include "unwindkit/stepper.h"

namespace unwindkit::dwarf {

namespace {

// libdw reports "no FDE covers this address" as an error like any other; its message
// (DWARF_E_NO_MATCH, whose number is not in the public header) tells it apart from a
// broken table.
constexpr std::string_view kNoMatch = "no matching address range";

// Whether a CFI row may describe the caller's value of `r`: the general registers but the PC
// (whose caller value is the return address), and the floating-point registers the ABI
// preserves.
bool described(const ArchInfo& info, const RegisterInfo& r) {
  return (r.general && r.dwarf != info.pc) || r.callee_saved;
}

// A minimal ELF64 image holding `section` as `.eh_frame` at `address`: libdw reads CFI only
// out of ELF, and its `.eh_frame` reader (pointer encodings relative to the section address,
// the FDE search by pc, the ABI's initial rules for e_machine) is exactly what a Mach-O
// __eh_frame needs. No program headers, so libdw finds the section by its name.
std::vector<uint8_t> eh_frame_image(uint16_t machine, Bytes section, uint64_t address) {
  static constexpr char kNames[] = "\0.eh_frame\0.shstrtab";
  const size_t data_off = sizeof(Elf64_Ehdr);
  const size_t names_off = data_off + section.size();
  const size_t sh_off = (names_off + sizeof(kNames) + 7) & ~size_t{7};
  std::vector<uint8_t> image(sh_off + 3 * sizeof(Elf64_Shdr));
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;  // Mach-O with compact unwind is little-endian
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = sh_off;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  eh.e_shstrndx = 2;
  std::memcpy(image.data(), &eh, sizeof eh);
  if (!section.empty()) std::memcpy(image.data() + data_off, section.data(), section.size());
  std::memcpy(image.data() + names_off, kNames, sizeof(kNames));
  Elf64_Shdr sh[3]{};
  sh[1].sh_name = 1;  // ".eh_frame"
  sh[1].sh_type = SHT_PROGBITS;
  sh[1].sh_flags = SHF_ALLOC;
  sh[1].sh_addr = address;
  sh[1].sh_offset = data_off;
  sh[1].sh_size = section.size();
  sh[1].sh_addralign = 1;
  sh[2].sh_name = 11;  // ".shstrtab"
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = names_off;
  sh[2].sh_size = sizeof(kNames);
  sh[2].sh_addralign = 1;
  std::memcpy(image.data() + sh_off, sh, sizeof sh);
  return image;
}

struct FrameDeleter {
  void operator()(Dwarf_Frame* f) const { std::free(f); }
};

// An .eh_frame libdw searches through its .eh_frame_hdr table alone: a lookup runs only the
// FDE the table gives (or one an earlier lookup ran, which libdw keeps), so that FDE alone is
// read, at its first lookup, and not the whole table at the module's first (0.2 s for a
// million FDEs, where libdw takes 0.5 ms). A bit per table entry says its FDE was read and
// found fine, so a later lookup costs one binary search, as libdw's own first lookup in an FDE
// does; a bit, not a byte, because the bits are zeroed at the module's first lookup (128 KB
// for a million FDEs). The rare refusals are kept apart.
class SearchedFrame {
 public:
  explicit SearchedFrame(EhFrame frame)
      : frame_(std::move(frame)),
        entries_(frame_.cfi),
        read_fine_(std::make_unique<std::atomic<uint64_t>[]>(frame_.search->entries() / 64 + 1)) {}

  std::optional<Error> refusal(uint64_t address) {
    const auto hit = searched_fde(frame_, address);
    if (!hit) return std::nullopt;
    std::atomic<uint64_t>& word = read_fine_[hit->entry / 64];
    const uint64_t bit = uint64_t{1} << (hit->entry % 64);
    if (word.load(std::memory_order_acquire) & bit) return std::nullopt;
    const std::lock_guard lock(mutex_);
    if (word.load(std::memory_order_relaxed) & bit) return std::nullopt;  // read meanwhile
    auto read = read_locked(*hit);
    if (!read) return read.error();
    return std::nullopt;
  }

  // CfiTables::describes() for this .eh_frame: libdw's lookup at `address` finds an FDE or
  // fails, not "no match". Told by the FDE the table leads to, read here, not by libdw, which
  // makes and keeps an entry in its tree of FDEs for each: 1.4 us a function, most of the time
  // a side file took to find nothing to add for a 1 M-function module that kept `.eh_frame`.
  // (libdw's kept FDEs come first in its lookups; they can give another answer only where FDEs
  // overlap.) Asked in address order, as a module's functions are, a table that ascends is
  // searched on from the last answer, and an FDE that covers the address answers with its
  // extent: whether libdw could use the rest of it, or its program would be refused, does not
  // change the answer there (a lookup that fails is answered true too).
  bool describes(uint64_t address) {
    const std::lock_guard lock(mutex_);
    if (!ascends_) ascends_ = search_ascends(frame_);
    const auto hit = *ascends_ && last_hit_ ? searched_fde_from(frame_, address, *last_hit_)
                                            : searched_fde(frame_, address);
    if (!hit) return false;  // binary_search_fde found no entry: "no match"
    last_hit_ = hit->entry;
    if (const auto extent = entries_.extent_at(hit->offset);
        extent && address - extent->first < extent->second)
      return true;
    auto read = read_locked(*hit);
    // Refused, or no usable FDE there: libdw fails on it with an error (__libdw_fde_by_offset).
    if (!read || !*read) return true;
    const Fde& fde = **read;
    // Before the FDE's start libdw fails too (a table out of order); past its end (the table
    // states no end) is "no match", as is an FDE covering nothing.
    return address < fde.start || address - fde.start < fde.range;
  }

 private:
  // The FDE of table entry `hit`, read (under mutex_) unless refused before: a refusal is
  // kept, an FDE found fine is marked so.
  Result<std::optional<Fde>> read_locked(const SearchHit& hit) {
    if (auto refused = refused_.find(hit.entry); refused != refused_.end())
      return tl::unexpected(refused->second);
    auto read = entries_.check_at(hit.offset);
    if (!read) {
      refused_.emplace(hit.entry, read.error());
      return read;
    }
    read_fine_[hit.entry / 64].fetch_or(uint64_t{1} << (hit.entry % 64), std::memory_order_release);
    return read;
  }

  EhFrame frame_;
  CfiEntries entries_;
  std::unique_ptr<std::atomic<uint64_t>[]> read_fine_;  // a bit by table entry
  std::mutex mutex_;                                    // reading, and refused_
  std::map<size_t, Error> refused_;                     // by table entry
  std::optional<bool> ascends_;                         // search_ascends(), at describes()'s first
  std::optional<size_t> last_hit_;                      // describes()'s last table entry
};

}  // namespace

struct CfiTables::Impl {
  Arch arch = Arch::X86_64;
  Elf* elf = nullptr;
  Dwarf* dwarf = nullptr;
  Dwarf_CFI* eh_frame = nullptr;     // owned: dwarf_cfi_end
  Dwarf_CFI* debug_frame = nullptr;  // owned by `dwarf`
  std::vector<uint8_t> image;        // open_eh_frame's synthesized ELF, which `elf` reads
  // Set once, before the first lookup: why libdw may not run a table's programs, or the
  // .eh_frame whose programs are read one lookup at a time.
  mutable std::once_flag checked;
  // Set once `checked` has run: std::call_once sets two thread-locals and calls pthread_once
  // on every call, and a module's "nothing to add" asks once per function (a plugin's TLS
  // lookups alone were 4 % of it for 1 M functions).
  mutable std::atomic<bool> check_done{false};
  mutable std::optional<Error> eh_frame_refused, debug_frame_refused;
  mutable std::unique_ptr<SearchedFrame> searched;

  ~Impl() {
    if (eh_frame) dwarf_cfi_end(eh_frame);
    if (dwarf) dwarf_end(dwarf);
    if (elf) elf_end(elf);
  }

  // `name` is for an error: the table's, not one made per register and lookup (names made,
  // and the register list made per lookup, were 38 % of a warm lookup's instructions in
  // libLLVM 22).
  static Result<RegRule> reg_rule(Dwarf_Frame* frame, uint16_t r, std::string_view name,
                                  const LowerContext& ctx) {
    std::array<Dwarf_Op, 3> ops_mem{};
    Dwarf_Op* ops = ops_mem.data();
    size_t nops = 0;
    const int result = dwarf_frame_register(frame, r, ops_mem.data(), &ops, &nops);
    return lower_register(result, ops, nops, name, ctx);
  }

  Result<UnwindRule> lower(Dwarf_Frame* frame, const LowerContext& ctx) const {
    UnwindRule rule;
    rule.arch = arch;
    rule.source = Source::Cfi;
    // CFI states every save: a callee-saved register it does not mention is unchanged.
    rule.unlisted = Unlisted::Unchanged;
    rule.sp_from_cfa = arch_info(arch).sp_from_cfa;
    Dwarf_Addr start = 0, end = 0;
    bool signal = false;
    const int ra_col = dwarf_frame_info(frame, &start, &end, &signal);
    if (ra_col < 0) return fail(ctx.section, ctx.address, "return_address_register", dwarf_errmsg(-1));
    rule.func_start = start;
    rule.func_end = end;
    rule.signal_frame = signal;

    Dwarf_Op* cfa_ops = nullptr;
    size_t cfa_nops = 0;
    if (dwarf_frame_cfa(frame, &cfa_ops, &cfa_nops) != 0)
      return fail(ctx.section, ctx.address, "cfa", dwarf_errmsg(-1));
    auto cfa = lower_cfa(std::span<const Dwarf_Op>(cfa_ops, cfa_nops), ctx);
    if (!cfa) return tl::unexpected(cfa.error());
    rule.cfa = *cfa;

    const ArchInfo& info = arch_info(arch);
    const auto ra_reg = static_cast<uint16_t>(ra_col);
    auto ra = reg_rule(frame, ra_reg, reg_name(arch, ra_reg), ctx);
    if (!ra) return tl::unexpected(ra.error());
    // "Same value" in the return-address column: the return address is still in that
    // register (AArch64 x30 / s390x r14 in a leaf).
    rule.ra = ra->kind == RegRule::Kind::Unchanged ? RegRule::in_reg(ra_reg) : *ra;

    auto fp = reg_rule(frame, info.fp, reg_name(arch, info.fp), ctx);
    if (!fp) return tl::unexpected(fp.error());
    rule.fp = *fp;

    for (const RegisterInfo& reg : info.registers) {
      const uint16_t r = reg.dwarf;
      if (!described(info, reg) || r == ra_reg || r == info.fp) continue;
      auto rr = reg_rule(frame, r, reg.name, ctx);
      if (!rr) return tl::unexpected(rr.error());
      // Only rules that recover a value are listed; "same value" and "undefined" follow the
      // stepper's ABI defaults instead of libdw's, because libdw cannot tell a register the
      // CFI never mentions from one it describes, and fills the former from its own initial
      // table, whose x86_64 version marks rax (DWARF 0) callee-saved in place of rbx (3).
      if (rr->kind == RegRule::Kind::Unchanged || rr->kind == RegRule::Kind::Undefined) continue;
      if (r == info.sp && *rr == RegRule::val_cfa(rule.sp_from_cfa)) continue;
      rule.saved.push_back({r, *rr});
    }
    return rule;
  }

  // Every program libdw may run for a lookup at `address` in `cfi`, read before it runs any
  // (cfi_entries.h): the error that refuses the lookup, if one does. Where libdw may run any of
  // a table's programs, all are read at the first lookup and one past a bound refuses every
  // lookup. CFI libdw reads where we find none to read is refused too.
  std::optional<Error> refusal(Dwarf_CFI* cfi, uint64_t address) const {
    check_once();
    if (cfi != eh_frame) return debug_frame_refused;
    return searched ? searched->refusal(address) : eh_frame_refused;
  }

  // Reads what the first lookup of any table must (above), once: the tables' refusals, or the
  // .eh_frame searched one lookup at a time.
  void check_once() const {
    if (check_done.load(std::memory_order_acquire)) return;
    std::call_once(checked, [&] {
      const auto first_error = [&](std::vector<EhFrame> frames) -> std::optional<Error> {
        if (frames.empty()) return unfound(".eh_frame");
        if (frames.size() == 1 && frames[0].search) {
          searched = std::make_unique<SearchedFrame>(std::move(frames[0]));
          return std::nullopt;
        }
        for (const EhFrame& f : frames)
          if (auto read = CfiEntries(f.cfi).check(f.table); !read) return read.error();
        return std::nullopt;
      };
      if (eh_frame) eh_frame_refused = first_error(eh_frames_as_libdw(elf));
      if (debug_frame) {
        auto data = debug_frame_as_libdw(elf);
        if (!data) {
          debug_frame_refused = unfound(".debug_frame");
        } else if (auto read = CfiEntries(*data).check({}); !read) {
          debug_frame_refused = read.error();
        }
      }
      check_done.store(true, std::memory_order_release);
    });
  }

  static Error unfound(std::string_view section) {
    return Error{std::string(section), 0, "section", "libdw reads CFI whose bytes were not found"};
  }

  // nullopt: this table has no FDE for `address`.
  Result<std::optional<UnwindRule>> lookup_in(Dwarf_CFI* cfi, std::string_view section,
                                              uint64_t address) const {
    if (auto refused = refusal(cfi, address)) return tl::unexpected(std::move(*refused));
    Dwarf_Frame* raw = nullptr;
    if (dwarf_cfi_addrframe(cfi, address, &raw) != 0) {
      const char* msg = dwarf_errmsg(-1);
      if (msg && std::string_view(msg) == kNoMatch) return std::nullopt;
      return fail(section, address, "fde", fmt::format("pc {:#x}: {}", address, msg ? msg : "libdw error"));
    }
    std::unique_ptr<Dwarf_Frame, FrameDeleter> frame(raw);
    auto rule = lower(frame.get(), LowerContext{section, address});
    if (!rule) return tl::unexpected(rule.error());
    return std::optional<UnwindRule>(std::move(*rule));
  }

  // lookup_in's answer is not nullopt: an FDE covers `address` (or libdw fails on it). An
  // .eh_frame searched through its table is answered without libdw (SearchedFrame).
  bool describes_in(Dwarf_CFI* cfi, uint64_t address) const {
    check_once();
    if (cfi == eh_frame && searched) return searched->describes(address);
    if (refusal(cfi, address)) return true;
    Dwarf_Frame* raw = nullptr;
    if (dwarf_cfi_addrframe(cfi, address, &raw) == 0) {
      std::unique_ptr<Dwarf_Frame, FrameDeleter> frame(raw);
      return true;
    }
    const char* msg = dwarf_errmsg(-1);
    return !(msg && std::string_view(msg) == kNoMatch);
  }
};

CfiTables::CfiTables(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CfiTables::CfiTables(CfiTables&&) noexcept = default;
CfiTables& CfiTables::operator=(CfiTables&&) noexcept = default;
CfiTables::~CfiTables() = default;

Result<CfiTables> CfiTables::open(const elf::ElfFile& file) {
  const auto arch = file.arch();
  if (!arch)
    return fail(ErrorKind::Unsupported, "ELF", 0, "e_machine",
                fmt::format("{}: no unwinder for machine {}", file.name(), file.machine()));
  auto impl = std::make_unique<Impl>();
  impl->arch = *arch;
  // libelf only reads the image here (ELF_C_READ_MMAP_PRIVATE semantics, as elf_file.cpp).
  const Bytes image = file.image();
  impl->elf = elf_memory(const_cast<char*>(reinterpret_cast<const char*>(image.data())), image.size());
  if (!impl->elf) return fail("ELF", 0, "elf_memory", elf_errmsg(-1));
  impl->eh_frame = dwarf_getcfi_elf(impl->elf);
  // dwarf_begin_elf fails ("no DWARF information") for files without debug sections: then
  // there simply is no .debug_frame.
  impl->dwarf = dwarf_begin_elf(impl->elf, DWARF_C_READ, nullptr);
  if (impl->dwarf) impl->debug_frame = dwarf_getcfi(impl->dwarf);
  return CfiTables(std::move(impl));
}

Result<CfiTables> CfiTables::open_eh_frame(Arch arch, Bytes section, uint64_t address) {
  if (arch != Arch::X86_64 && arch != Arch::AArch64)
    return fail(ErrorKind::Unsupported, "__eh_frame", 0, "arch",
                fmt::format("no DWARF CFI reader for {} outside ELF", arch_name(arch)));
  auto impl = std::make_unique<Impl>();
  impl->arch = arch;
  impl->image = eh_frame_image(arch == Arch::X86_64 ? EM_X86_64 : EM_AARCH64, section, address);
  impl->elf = elf_memory(reinterpret_cast<char*>(impl->image.data()), impl->image.size());
  if (!impl->elf) return fail("__eh_frame", 0, "elf_memory", elf_errmsg(-1));
  impl->eh_frame = dwarf_getcfi_elf(impl->elf);
  return CfiTables(std::move(impl));
}

std::optional<CfiTables::PltCfa> CfiTables::plt_cfa(uint64_t address) const {
  if (impl_->arch != Arch::X86_64 || !impl_->eh_frame || impl_->refusal(impl_->eh_frame, address))
    return std::nullopt;
  Dwarf_Frame* raw = nullptr;
  if (dwarf_cfi_addrframe(impl_->eh_frame, address, &raw) != 0) return std::nullopt;
  std::unique_ptr<Dwarf_Frame, FrameDeleter> frame(raw);
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  if (dwarf_frame_cfa(frame.get(), &ops, &n) != 0 || n != 9) return std::nullopt;
  const RegisterSet names(Arch::X86_64);
  const auto lit = [&](size_t i) -> std::optional<uint32_t> {
    if (ops[i].atom < DW_OP_lit0 || ops[i].atom > DW_OP_lit31) return std::nullopt;
    return ops[i].atom - DW_OP_lit0;
  };
  const auto mask = lit(2), from = lit(4), shift = lit(6);
  if (ops[0].atom != DW_OP_breg0 + names.sp_reg() || ops[1].atom != DW_OP_breg16 ||
      ops[1].number != 0 || !mask || ops[3].atom != DW_OP_and || !from || ops[5].atom != DW_OP_ge ||
      !shift || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
    return std::nullopt;
  const uint32_t block = *mask + 1;
  if ((block & *mask) != 0 || *from >= block) return std::nullopt;  // a power of two
  return PltCfa{static_cast<int64_t>(ops[0].number), block, *from, int64_t{1} << *shift};
}

bool CfiTables::empty() const { return !impl_->eh_frame && !impl_->debug_frame; }
bool CfiTables::has_eh_frame() const { return impl_->eh_frame != nullptr; }
bool CfiTables::has_debug_frame() const { return impl_->debug_frame != nullptr; }

Result<std::optional<UnwindRule>> CfiTables::lookup(uint64_t address) const {
  if (impl_->eh_frame) {
    auto r = impl_->lookup_in(impl_->eh_frame, ".eh_frame", address);
    if (!r || *r) return r;
  }
  if (impl_->debug_frame) return impl_->lookup_in(impl_->debug_frame, ".debug_frame", address);
  return std::nullopt;
}

bool CfiTables::describes(uint64_t address) const {
  return (impl_->eh_frame && impl_->describes_in(impl_->eh_frame, address)) ||
         (impl_->debug_frame && impl_->describes_in(impl_->debug_frame, address));
}

}  // namespace unwindkit::dwarf
