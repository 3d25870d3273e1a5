// The synthesized debug file (see synthesize.h).
#include "unwindkit/debuginfo/synthesize.h"

#include <dwarf.h>
#include <elf.h>
#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>

#include "unwindkit/dwarf/cfi.h"
#include "unwindkit/elf/side_file.h"
#include "unwindkit/prologue/fragments.h"
#include "unwindkit/prologue/lower.h"
#include "unwindkit/sframe/function_rows.h"
#include "unwindkit/sframe/constants.h"
#include "unwindkit/sframe/elf_section.h"
#include "unwindkit/sframe/sframe.h"
#include "unwindkit/sframe/validate.h"
#include "unwindkit/trace/constants.h"
#include "unwindkit/trace/decode.h"
#include "unwindkit/trace/to_dwarf.h"
#include "unwindkit/unwind/entry_point.h"
#include "lldb_numbered_names.h"
#include "quick_rows.h"

namespace unwindkit::debuginfo {
namespace {

// LLDB refuses a symbol file with no symbols at all ("does not match any existing module"):
// one absolute marker makes it acceptable without naming any code. GDB's files go without:
// GDB weighs a symbol at address 0 in every lookup of a pc in the module (on a 1,000-thread
// core's `thread apply all bt`, about 2 % of GDB's instructions).
constexpr const char* kNoFunctionsMarker = "__unwindkit_synthesized";

constexpr const char* kEhFrame = ".eh_frame";

// GDB's files: program bytes an FDE grows to with adjacent functions (CfiWriterOptions::
// join_within): about four small functions, so a frame costs GDB a few dozen more opcodes
// to run (within measurement on a 3,000-frame `bt`) and a 1 M-function module's session
// about 30 % fewer instructions.
constexpr size_t kJoinWithin = 64;

// LLDB reads a symbol file through the first plug-in able to do everything with it
// (SymbolFile::FindPlugin). Without a line table that is SymbolFileSymtab, whose set-up has
// the module's whole symbol table built a second time, for the symbol file (on a 1 M-function
// module as long again as LLDB's own parse of it). DWARF's plug-in can do everything once
// `.debug_abbrev`, `.debug_info` and `.debug_line` are there: one compile unit with no
// attributes and a line table with no rows (DWARF 4) make the file DWARF's and name nothing.
std::vector<std::pair<std::string, std::vector<uint8_t>>> symbol_file_dwarf(Endian endian) {
  auto put = [endian](std::vector<uint8_t>& out, uint64_t v, unsigned size) {
    for (unsigned i = 0; i < size; ++i)
      out.push_back(static_cast<uint8_t>(v >> (endian == Endian::Little ? 8 * i : 8 * (size - 1 - i))));
  };
  constexpr uint16_t kVersion = 4;
  constexpr uint8_t kAbbrevCode = 1;  // ULEB128, as is DW_TAG_compile_unit (0x11)
  std::vector<uint8_t> abbrev{kAbbrevCode, DW_TAG_compile_unit, DW_CHILDREN_no,
                              0, 0 /* no attributes */, 0 /* end of the table */};
  std::vector<uint8_t> info;
  put(info, 2 + 4 + 1 + 1, 4);  // unit_length: version, debug_abbrev_offset, address_size, the DIE
  put(info, kVersion, 2);
  put(info, 0, 4);  // debug_abbrev_offset
  put(info, 8, 1);  // address_size
  put(info, kAbbrevCode, 1);
  // Header fields after header_length: minimum_instruction_length 1,
  // maximum_operations_per_instruction 1, default_is_stmt 1, line_base 0, line_range 1,
  // opcode_base 1 (no standard opcodes, so no standard_opcode_lengths), then empty
  // include_directories and file_names.
  const std::vector<uint8_t> line_header{1, 1, 1, 0, 1, 1, 0, 0};
  std::vector<uint8_t> line;
  put(line, 2 + 4 + line_header.size(), 4);  // unit_length: version, header_length, the header
  put(line, kVersion, 2);
  put(line, line_header.size(), 4);  // header_length
  line.insert(line.end(), line_header.begin(), line_header.end());
  return {{".debug_abbrev", std::move(abbrev)},
          {".debug_info", std::move(info)},
          {".debug_line", std::move(line)}};
}

// The module's allocated sections, as placeholders: debuggers map a symbol file's symbols onto
// the module's sections by name and address. Every one: GDB warns "section NAME not found in
// FILE" for each allocated section of the module a separate debug file lacks (symfile.c
// addr_info_make_relative), about twenty lines per module in every session. `unmapped`: also
// those in no PT_LOAD (a `.trace` or converted `.sframe` placed past the image), which GDB
// warns about as about any other; for LLDB a header for one would replace the module's own
// section, data and all, with ours.
std::vector<elf::SideFileSection> allocated_sections(const elf::ElfFile& module, bool unmapped) {
  auto loaded = [&](const elf::Section& s) {
    return std::any_of(module.segments().begin(), module.segments().end(), [&](const elf::Segment& p) {
      return p.type == PT_LOAD && s.addr >= p.vaddr && s.addr - p.vaddr < p.memsz;
    });
  };
  std::vector<elf::SideFileSection> out;
  for (const elf::Section& s : module.sections()) {
    // Whatever its name: a static glibc's `__libc_freeres_fn` and `__libc_IO_vtables` too.
    if (!(s.flags & SHF_ALLOC) || s.addr == 0 || s.name.empty() || (!unmapped && !loaded(s)))
      continue;
    out.push_back({s.name, s.flags & (SHF_ALLOC | SHF_WRITE | SHF_EXECINSTR), s.addr, s.size,
                   std::max<uint64_t>(1, s.addralign)});
  }
  return out;
}

// Function names the module's own symbols give (.symtab, else .dynsym), by start address.
std::map<uint64_t, std::string> function_names(const elf::ElfFile& module) {
  std::map<uint64_t, std::string> names;
  auto symbols = module.symbols();
  if (!symbols) return names;
  for (const elf::Symbol& sym : *symbols)
    if ((sym.type == STT_FUNC || sym.type == STT_GNU_IFUNC) && sym.shndx != SHN_UNDEF &&
        !sym.name.empty())
      names.emplace(sym.value, sym.name);
  return names;
}

// The module's executable sections.
std::vector<sframe::AddressRange> code_ranges(const elf::ElfFile& module) {
  std::vector<sframe::AddressRange> code;
  for (const elf::Section& s : module.sections())
    if ((s.flags & SHF_ALLOC) && (s.flags & SHF_EXECINSTR)) code.push_back({s.addr, s.addr + s.size});
  return code;
}

// Every PCMASK function's rows, counted before any is made (RepeatedRows).
Result<void> count_repeated_rows(const sframe::Section& section, std::string_view name,
                                 uint64_t limit) {
  RepeatedRows repeated(name, limit);
  for (size_t i = 0; i < section.fdes.size(); ++i) {
    const sframe::Fde& fde = section.fdes[i];
    if (auto counted = repeated.add(i, fde.start_field, fde.size,
                                    fde.pcmask() ? section.rep_size(fde) : 0, fde.fres.size());
        !counted)
      return counted;
  }
  return {};
}

// The module's SFrame section, when it passes the strict checks; a problem found goes to
// `left_out` and gives no CFI at all (a debugger is better off with none than wrong).
std::optional<sframe::ElfSection> checked_sframe(const elf::ElfFile& module,
                                                 std::vector<Error>& left_out) {
  const auto found = sframe::find_section(module);
  if (!found) return std::nullopt;
  std::vector<Error> problems = sframe::validate(found->section->data, found->section->addr,
                                                 code_ranges(module), found->format);
  if (!problems.empty()) {
    left_out.push_back(std::move(problems.front()));
    return std::nullopt;
  }
  return found;
}

// The module's SFrame rows as CFI, when its section passes the strict checks (checked_sframe);
// an Error when its PCMASK functions would repeat more than `max_repeated_rows` rows.
Result<std::optional<sframe::Section>> usable_sframe(const elf::ElfFile& module,
                                                     uint64_t max_repeated_rows,
                                                     std::vector<Error>& left_out) {
  const auto found = checked_sframe(module, left_out);
  if (!found) return std::nullopt;
  const elf::Section* section = found->section;
  auto decoded = sframe::decode(section->data, section->addr, found->format);
  if (!decoded) {
    left_out.push_back(decoded.error());
    return std::nullopt;
  }
  if (auto counted = count_repeated_rows(*decoded, section->name, max_repeated_rows); !counted)
    return tl::unexpected(counted.error());
  return std::optional<sframe::Section>(std::move(*decoded));
}

// Whether the module's SFrame may add to its own CFI `own`: not where `own` describes every
// function the section lists (sframe_beyond_cfi). An index that cannot be read may: the
// strict checks then say why.
bool sframe_adds_to(const elf::ElfFile& module, const dwarf::CfiTables& own) {
  const auto found = sframe::find_section(module);
  if (!found) return true;
  auto beyond = sframe_beyond_cfi(found->section->data, found->section->addr, found->format,
                                  std::span<const dwarf::CfiTables>(&own, 1));
  return !beyond || *beyond;
}

// `.trace` restated as DWARF, and its routines' names with their extents, when the module has
// no DWARF of its own (which a debugger would then read instead).
void add_trace(const elf::ElfFile& module, elf::SideFileSpec& spec,
               std::map<uint64_t, elf::SideFileSymbol>& routines, std::vector<Error>& left_out) {
  const elf::Section* section = module.section(trace::kSectionName);
  if (section == nullptr || module.section(".debug_info") != nullptr) return;
  auto decoded = trace::decode(section->data, module.is_64() ? 8 : 4);
  if (!decoded) {
    left_out.push_back(decoded.error());
    return;
  }
  for (const auto& m : decoded->modules)
    for (const auto& r : m.routines)
      if (!r.name.empty()) routines.emplace(r.start, elf::SideFileSymbol{r.name, r.start, 0});
  for (const auto& row : decoded->rows) {
    if (row.routine == trace::kNone) continue;
    const auto& r = decoded->modules[row.module].routines[row.routine];
    auto it = routines.find(r.start);
    if (it != routines.end()) it->second.size = std::max(it->second.size, row.end - r.start);
  }
  auto dwarf = trace::to_dwarf(*decoded, spec.endian);
  spec.debug_sections = {{".debug_abbrev", std::move(dwarf.debug_abbrev)},
                         {".debug_info", std::move(dwarf.debug_info)},
                         {".debug_line", std::move(dwarf.debug_line)}};
}

}  // namespace

namespace {

// What a cold fragment's analysis needs of the whole module (prologue/fragments.h): its jump
// index and where each function is, made once, at the first function that may be a fragment,
// by whichever thread meets it.
class Fragments {
 public:
  Fragments(const sframe::Section& section, const elf::ElfFile& module)
      : section_(section), module_(module) {}

  const prologue::JumpIndex& jumps() {
    std::call_once(once_, [this] {
      for (size_t i = 0; i < section_.fdes.size(); ++i)
        if (!section_.fdes[i].pcmask()) starts_.emplace_back(section_.fdes[i].func_start, i);
      std::sort(starts_.begin(), starts_.end());
      std::vector<uint64_t> starts;
      starts.reserve(starts_.size());
      for (const auto& [start, i] : starts_) starts.push_back(start);
      index_ = prologue::JumpIndex::build(module_, section_.arch(), starts);
    });
    return index_;
  }

  // The analysis of the function holding `pc`, entered by a call, kept in `made` (one
  // fragment's: only fragments ask, of the function their jumps come from).
  const prologue::Analysis* analysis_of(uint64_t pc, std::map<uint64_t, prologue::Analysis>& made) {
    (void)jumps();
    auto it = std::upper_bound(starts_.begin(), starts_.end(), std::pair{pc, SIZE_MAX});
    if (it == starts_.begin()) return nullptr;
    const sframe::Fde& fde = section_.fdes[std::prev(it)->second];
    if (pc >= fde.func_end()) return nullptr;
    if (auto found = made.find(fde.func_start); found != made.end()) return &found->second;
    auto rows = sframe::function_rows(section_, std::prev(it)->second);
    if (!rows || rows->empty()) return nullptr;
    return &made.emplace(fde.func_start, prologue::analyze_function(
                                             module_, section_.arch(), fde.func_start,
                                             fde.func_end(), *rows))
                .first->second;
  }

 private:
  const sframe::Section& section_;
  const elf::ElfFile& module_;
  std::once_flag once_;
  std::vector<std::pair<uint64_t, size_t>> starts_;  // function start, FDE index; sorted
  prologue::JumpIndex index_;
};

// A function's rows with the prologue analyzer's findings: a row at every SFrame row start
// and wherever what the code proves changes (a save between two rows). With `fragments`, a
// cold fragment is analyzed from the jumps into it.
dwarf::CfiFunction analyzed_function(const elf::ElfFile& module, const sframe::Fde& fde,
                                     std::span<const prologue::TableRow> rows,
                                     Fragments* fragments) {
  dwarf::CfiFunction fn{fde.func_start, fde.func_end(), {}};
  prologue::Analysis analysis = prologue::analyze_function(
      module, rows.front().rule.arch, fde.func_start, fde.func_end(), rows);
  if (fragments != nullptr && prologue::may_be_fragment(analysis)) {
    std::map<uint64_t, prologue::Analysis> made;
    analysis = prologue::analyze_entered(
        std::move(analysis), module, fde.func_start, fde.func_end(), rows,
        [&]() -> const prologue::JumpIndex& { return fragments->jumps(); },
        [&](uint64_t pc) { return fragments->analysis_of(pc, made); });
  }
  std::vector<uint64_t> starts;
  starts.reserve(rows.size() + analysis.regions.size());
  for (const prologue::TableRow& row : rows) starts.push_back(row.start);
  for (const prologue::Region& region : analysis.regions) starts.push_back(region.start);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  fn.rows.reserve(starts.size());
  for (uint64_t address : starts) {
    if (address < fde.func_start || address >= fde.func_end()) continue;
    auto row = std::find_if(rows.rbegin(), rows.rend(), [&](const prologue::TableRow& r) {
      return r.start <= address && address < r.end;
    });
    if (row == rows.rend()) continue;
    UnwindRule rule = row->rule;
    prologue::lower(analysis.at(address), rule);
    fn.rows.push_back({address, std::move(rule)});
  }
  return fn;
}

// The CFI of the section's FDE `i`, with no row when it has none.
dwarf::CfiFunction cfi_function(const sframe::Section& section, const elf::ElfFile& module,
                                size_t i, Fragments* fragments) {
  const sframe::Fde& fde = section.fdes[i];
  if (!fde.pcmask()) {
    if (auto rows = sframe::function_rows(section, i); rows && !rows->empty())
      return analyzed_function(module, fde, *rows, fragments);
  }
  dwarf::CfiFunction fn{fde.func_start, fde.func_end(), {}};
  const uint32_t rep = fde.pcmask() ? section.rep_size(fde) : 0;
  const uint32_t blocks = repetitions(fde.size, rep);
  const bool plt = prologue::in_plt(module, fde.func_start);  // a PCMASK FDE has no rows to analyze
  for (uint32_t block = 0; block < blocks; ++block) {
    for (const sframe::Fre& fre : fde.fres) {
      const uint64_t address = fde.func_start + uint64_t{block} * rep + fre.start_offset;
      if (address >= fde.func_end()) continue;
      auto rule = sframe::lookup(section, address);
      if (!rule || !*rule) continue;
      if (plt) (*rule)->unlisted = Unlisted::Unchanged;
      fn.rows.push_back({address, **rule});
    }
  }
  return fn;
}

// The CFI of the SFrame function at the program's entry point, where SFrame covers it (a
// `.sframe` made from all of a link's CFI, SFrame v3's outermost marker): the function that
// ends the stack, which the entry point's own rule then leaves to it.
Result<std::vector<dwarf::CfiFunction>> entry_function(const elf::ElfFile& module,
                                                       uint64_t max_repeated_rows) {
  const auto found = sframe::find_section(module);
  if (!found || module.entry() == 0) return {};
  auto section = sframe::decode(found->section->data, found->section->addr, found->format);
  if (!section) return {};
  if (auto counted = count_repeated_rows(*section, found->section->name, max_repeated_rows);
      !counted)
    return tl::unexpected(counted.error());
  for (size_t i = 0; i < section->fdes.size(); ++i) {
    const sframe::Fde& fde = section->fdes[i];
    if (module.entry() >= fde.func_start && module.entry() < fde.func_end()) {
      dwarf::CfiFunction fn = cfi_function(*section, module, i, nullptr);
      if (fn.rows.empty()) return {};
      return std::vector<dwarf::CfiFunction>{std::move(fn)};
    }
  }
  return {};
}

// Below this many functions one thread does it all: starting threads would cost more.
constexpr size_t kFunctionsPerThread = 4096;
// Functions analyzed, then written, at a time (synthesize): their rows take about 20 MB.
constexpr size_t kFunctionsPerBatch = size_t{1} << 15;
constexpr unsigned kMaxThreads = 16;

}  // namespace

std::vector<dwarf::CfiFunction> cfi_functions(const sframe::Section& section,
                                              const elf::ElfFile& module, size_t first,
                                              size_t last,
                                              const std::function<bool(uint64_t)>& wanted) {
  // Each function's analysis is independent of the others' (a large module's synthesis is
  // mostly this): contiguous shares on as many threads as the machine has, joined in order.
  last = std::min(last, section.fdes.size());
  first = std::min(first, last);
  // Asked here, on one thread: `wanted` may read tables that are not safe to share.
  std::vector<size_t> chosen;
  chosen.reserve(last - first);
  for (size_t i = first; i < last; ++i)
    if (!wanted || wanted(section.fdes[i].func_start)) chosen.push_back(i);
  const size_t count = chosen.size();
  const unsigned threads = static_cast<unsigned>(std::clamp<size_t>(
      count / kFunctionsPerThread, 1, std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads)));
  Fragments fragments(section, module);
  auto share = [&](size_t begin, size_t end) {  // positions in `chosen`
    std::vector<dwarf::CfiFunction> out;
    for (size_t i = begin; i < end; ++i)
      if (dwarf::CfiFunction fn = cfi_function(section, module, chosen[i], &fragments);
          !fn.rows.empty())
        out.push_back(std::move(fn));
    return out;
  };
  auto bound = [&](unsigned t) { return count * t / threads; };
  std::vector<std::future<std::vector<dwarf::CfiFunction>>> others;
  unsigned launched = 1;  // shares [0, launched) have a thread, this one's the first
  try {
    for (; launched < threads; ++launched)
      others.push_back(
          std::async(std::launch::async, share, bound(launched), bound(launched + 1)));
  } catch (const std::system_error&) {
    // No thread to be had (a process at its limit): this one does the shares left.
  }
  std::vector<dwarf::CfiFunction> out = share(0, bound(1));
  auto append = [&out](std::vector<dwarf::CfiFunction> part) {
    out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  };
  for (auto& other : others) append(other.get());
  append(share(bound(launched), count));
  return out;
}

namespace {

// The quick file's CFI reserved per byte of SFrame (the 1 M-function module's: 1.2).
constexpr size_t kQuickBytesPerSframeByte = 2;

// Making an analyzed file this large leaves its working memory (a 1 M-function module's:
// about 85 MB) free in malloc's arenas, which glibc keeps from the system: it is given back at
// once. A quick file's walk holds a few batches of rows: nothing to give back, and LLDB waits
// for the trim (its arenas walked and their free pages handed back, later faulted in again).
constexpr size_t kGiveBackAfter = size_t{8} << 20;

Result<DebugFile> make_file(const elf::ElfFile& module, const SynthesizeOptions& options) {
  auto build_id = module.build_id();
  if (!build_id || build_id->empty())
    return fail("ELF", 0, "NT_GNU_BUILD_ID", "the module has no build-id");
  const std::optional<Arch> arch = module.arch();
  if (!module.is_64() || (module.type() != elf::kTypeExec && module.type() != elf::kTypeDyn) ||
      (arch != Arch::X86_64 && arch != Arch::AArch64 && arch != Arch::S390x))
    return fail("ELF", 0, "e_machine", "not a 64-bit executable or shared object we unwind");

  DebugFile out;
  elf::SideFileSpec spec;
  spec.machine = module.machine();
  spec.type = module.type();
  spec.endian = module.endian();
  spec.build_id = std::move(*build_id);
  spec.sections = allocated_sections(module, options.fallback_names == FallbackNames::None);

  std::map<uint64_t, elf::SideFileSymbol> routines;  // by start: .trace's names win
  add_trace(module, spec, routines, out.left_out);

  const bool whole = options.unwind && !options.entry_point_only;
  // A debugger takes a debug file's .debug_frame over the module's own CFI where both
  // describe a function (GDB 13 does): leave out what the module's CFI already covers.
  const auto own = dwarf::CfiTables::open(module);
  const bool has_own = own && !own->empty();
  // (An FDE we cannot lower, a PLT's, covers its function too.)
  auto covered = [&](uint64_t start) { return has_own && own->describes(start); };
  const bool sframe_adds = !options.unwind || !has_own || sframe_adds_to(module, *own);
  // Analyzed: decoded, each function's rows joined with the analyzer's findings. Quick: the
  // rows as the section states them, read from its bytes (quick_rows).
  std::optional<sframe::Section> sframe;
  if (whole && options.analyze && sframe_adds) {
    auto usable = usable_sframe(module, options.max_repeated_rows, out.left_out);
    if (!usable) return tl::unexpected(usable.error());
    sframe = std::move(*usable);
  }
  // (No section: not quick.) Its checks are made as its rows are read (quick_rows).
  sframe::ElfSection quick;
  if (whole && !options.analyze && sframe_adds)
    quick = sframe::find_section(module).value_or(sframe::ElfSection{});
  bool few_functions = true;  // see SynthesizeOptions::dwarf_unit_from
  if (options.unwind &&
      (sframe || quick.section != nullptr || options.entry_point_only || !sframe_adds)) {
    const std::optional<UnwindRule> entry_rule = unwind::entry_point_rule(module);
    // The entry point's own rule goes in order among the SFrame functions.
    std::optional<dwarf::CfiFunction> entry;
    if (entry_rule) entry = dwarf::CfiFunction{entry_rule->func_start, entry_rule->func_end,
                                               {{entry_rule->func_start, *entry_rule}}};
    // LLDB names what it finds only in `.eh_frame` itself; a module's own `.eh_frame` would
    // give way to ours (LLDB keeps the larger of two same-named sections).
    const bool eh_frame = options.fallback_names == FallbackNames::Lldb && options.lldb_loads_it &&
                          module.section(kEhFrame) == nullptr;
    const std::map<uint64_t, std::string> names =
        sframe_adds || entry ? function_names(module) : std::map<uint64_t, std::string>{};
    // GDB takes an FDE for its rules alone (a frame's function comes from symbols) and
    // reads fewer FDEs faster: on a 1 M-function module GDB 13 spent about a third of its
    // session parsing and sorting them. LLDB takes FDE extents for function bounds.
    dwarf::CfiWriterOptions cfi{
        sframe ? sframe->arch() : *arch, sframe ? sframe->endian : module.endian(), 8,
        options.fallback_names == FallbackNames::None ? kJoinWithin : 0, {}};
    // The quick file's callee-saved registers are undefined in every row but a PLT's and the
    // entry point's: stated once, in the CIE. (The frame pointer has a rule in every row.)
    if (quick.section != nullptr)
      for (uint16_t r : callee_saved_registers(cfi.arch))
        if (r != arch_info(cfi.arch).fp) cfi.cie_undefined.push_back(r);
    // `.eh_frame`'s address size comes before any FDE: from every function that may be
    // written (one left out later can only make it wider than needed, never too narrow).
    uint64_t highest_end = entry ? entry->end : 0;
    size_t fres = 0;
    if (sframe)
      for (const sframe::Fde& fde : sframe->fdes) {
        highest_end = std::max(highest_end, fde.func_end());
        fres += fde.fres.size();
      }
    // Quick: a function outside the executable sections fails the walk's checks, and nothing
    // is written. No count is read before the walk; a function's CFI takes about as many
    // bytes as its SFrame, and reserved pages not written are never faulted in.
    size_t reserve = dwarf::cfi_size_estimate((sframe ? sframe->fdes.size() : 0) + 1, fres);
    if (quick.section != nullptr) {
      for (const sframe::AddressRange& code : code_ranges(module))
        highest_end = std::max(highest_end, code.end);
      reserve = kQuickBytesPerSframeByte * quick.section->data.size();
    }
    dwarf::CfiWriter writer(eh_frame ? dwarf::CfiSection::EhFrame : dwarf::CfiSection::DebugFrame,
                            cfi, highest_end, reserve);
    size_t written = 0;
    // LLDB 19's ids for the functions the module's symbols do not name (.trace's routines
    // included: LLDB 19 numbers them on the twin, whose symbols lack them too).
    LldbNumbering numbering(module);
    // The function [start, end)'s name, from the module's symbols, else LLDB's.
    auto name = [&](uint64_t start, uint64_t end) {
      ++written;
      auto it = names.find(start);
      std::optional<uint64_t> id;
      if (options.fallback_names == FallbackNames::LldbNumbered && it == names.end())
        id = numbering.next(start);
      if (routines.contains(start)) return;
      if (it != names.end())
        spec.functions.push_back({it->second, start, end - start});
      else if (options.fallback_names == FallbackNames::Lldb && !eh_frame)
        spec.functions.push_back(
            {fmt::format("___lldb_unnamed_symbol_{:x}", start), start, end - start});
      else if (id)
        spec.functions.push_back({fmt::format("___lldb_unnamed_symbol{}", *id), start, end - start});
    };
    auto put = [&](const dwarf::CfiFunction& fn) {
      name(fn.start, fn.end);
      writer.add(fn);
    };
    // The entry point's rule, when it comes before a function starting at `start`.
    auto entry_before = [&](uint64_t start) {
      if (entry && start > entry->start) {
        put(*entry);
        entry.reset();
      }
    };
    auto put_all = [&](const std::vector<dwarf::CfiFunction>& functions) {
      for (const dwarf::CfiFunction& fn : functions) {
        if (covered(fn.start)) continue;
        entry_before(fn.start);
        put(fn);
      }
    };
    if (sframe) {
      // A share of the functions at a time, written before the next is analyzed: their rows
      // are not all held at once.
      for (size_t first = 0; first < sframe->fdes.size(); first += kFunctionsPerBatch)
        put_all(cfi_functions(*sframe, module, first, first + kFunctionsPerBatch,
                              [&covered](uint64_t start) { return !covered(start); }));
    } else if (quick.section != nullptr) {
      auto add = [&](uint64_t start, uint64_t end, std::span<const dwarf::CfiRuleRow> rows,
                     std::span<const UnwindRule> rules) {
        if (covered(start)) return;
        entry_before(start);
        name(start, end);
        writer.add(start, end, rows, rules);
      };
      auto walked = quick_rows(module, *quick.section, quick.format, *arch, code_ranges(module),
                               options.max_repeated_rows, add);
      if (!walked) {  // no CFI at all (a debugger is better off with none than wrong)
        out.left_out.push_back(walked.error());
        spec.functions.clear();
        entry.reset();
        written = 0;
      }
    } else if (!entry && sframe_adds) {
      // Entry point only: its own rule, else the SFrame function there.
      auto at_entry = entry_function(module, options.max_repeated_rows);
      if (!at_entry) return tl::unexpected(at_entry.error());
      put_all(*at_entry);
    }
    if (entry) put(*entry);
    few_functions = written < options.dwarf_unit_from;
    if (written != 0) {
      spec.debug_frame = std::move(writer).finish();
      if (eh_frame) spec.cfi_section = kEhFrame;
    }
  }
  if (options.unwind && spec.debug_frame.empty() && spec.debug_sections.empty())
    return out;  // nothing to add

  // (A module's own DWARF would win over ours: LLDB keeps the larger section.)
  const bool own_dwarf = module.section(".debug_info") != nullptr ||
                         module.section(".debug_abbrev") != nullptr ||
                         module.section(".debug_line") != nullptr;
  if (options.fallback_names == FallbackNames::Lldb && options.lldb_loads_it &&
      spec.debug_sections.empty() && !own_dwarf && !few_functions)
    spec.debug_sections = symbol_file_dwarf(spec.endian);
  for (auto& [start, symbol] : routines) spec.functions.push_back(std::move(symbol));
  if (spec.functions.empty() && options.fallback_names != FallbackNames::None)
    spec.functions.push_back({kNoFunctionsMarker, 0, 0});
  out.bytes = elf::write_side_file(std::move(spec));
  return out;
}

}  // namespace

Result<bool> sframe_beyond_cfi(Bytes bytes, uint64_t address, sframe::Format format,
                               std::span<const dwarf::CfiTables> cfi) {
  bool beyond = false;
  auto visited = sframe::visit_function_ranges(bytes, address, format, [&](const auto& f) {
    beyond = std::none_of(cfi.begin(), cfi.end(),
                          [&](const dwarf::CfiTables& t) { return t.describes(f.start); });
    return !beyond;
  });
  if (!visited) return tl::unexpected(visited.error());
  return beyond;
}

Result<DebugFile> synthesize(const elf::ElfFile& module, const SynthesizeOptions& options) {
  auto made = make_file(module, options);
  if (made && options.analyze && made->bytes.size() >= kGiveBackAfter) ::malloc_trim(0);
  return made;
}

}  // namespace unwindkit::debuginfo
