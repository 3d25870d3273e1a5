// Which bytes libdw reads as CFI (dwarf_getcfi_elf.c, fde.c's binary_search_fde), so that
// CfiTables reads every program libdw may run. Where libdw versions differ, or libdw would
// fail, every choice is taken: reading more than libdw runs refuses only hostile CFI.
#include <dwarf.h>
#include <gelf.h>

#include <algorithm>
#include <string_view>

#include "cfi_entries.h"

namespace unwindkit::dwarf {

namespace {

constexpr std::string_view kEhFrame = ".eh_frame", kEhFrameHdr = ".eh_frame_hdr";
constexpr std::string_view kDebugFrame = ".debug_frame", kZDebugFrame = ".zdebug_frame";
constexpr uint8_t kHdrVersion = 1;
constexpr size_t kHdrFixedBytes = 4;  // version and the three encodings
constexpr uint8_t kLinkerTable = DW_EH_PE_datarel | DW_EH_PE_sdata4;
constexpr size_t kLinkerPair = SearchTable::kPairBytes;  // two sdata4

struct Header {
  Bytes bytes;  // .eh_frame_hdr
  uint64_t address = 0;
};

// parse_eh_frame_hdr: where .eh_frame is, and the search table (the entries inside the
// header: libdw refuses a table that runs past it, or reads past it in versions before the
// check). nullopt where libdw reads no header.
struct Parsed {
  uint64_t eh_frame = 0;
  // binary_search_fde reads the table as data of its own, at the header's address.
  CfiData table;
  uint8_t encoding = DW_EH_PE_omit;
  uint64_t count = 0;  // 0: none
  std::optional<SearchTable> linker_table;  // a table as linkers write it, all inside
};
std::optional<Parsed> parse_header(const Header& hdr, bool is_64, Endian endian) {
  const Bytes h = hdr.bytes;
  if (h.size() < kHdrFixedBytes || h[0] != kHdrVersion) return std::nullopt;
  const uint8_t ptr_enc = h[1], count_enc = h[2], table_enc = h[3];
  if (ptr_enc == DW_EH_PE_omit) return std::nullopt;
  const CfiData as_cfi{h, hdr.address, kEhFrameHdr, true, is_64, endian};
  size_t pos = kHdrFixedBytes;
  Parsed out;
  const auto eh_frame = read_encoded(as_cfi, ptr_enc, pos, hdr.address);
  if (!eh_frame) return std::nullopt;
  out.eh_frame = *eh_frame;
  uint64_t count = 0;
  if (count_enc != DW_EH_PE_omit) {
    const auto n = read_encoded(as_cfi, count_enc, pos, hdr.address);
    if (!n) return std::nullopt;
    if (table_enc != DW_EH_PE_omit && (table_enc & ~DW_EH_PE_signed) != DW_EH_PE_uleb128)
      count = *n;
  }
  if (count == 0 || pos > h.size()) return out;
  const size_t value = encoded_value_size({}, 0, table_enc, is_64);
  if (value == 0) return out;  // libdw searches no table
  if (table_enc == kLinkerTable && count <= (h.size() - pos) / kLinkerPair)
    out.linker_table = SearchTable{h.subspan(pos, count * kLinkerPair), hdr.address};
  out.table = CfiData{h.subspan(pos), hdr.address, kEhFrameHdr, true, is_64, endian};
  out.encoding = table_enc;
  out.count = std::min<uint64_t>(count, (h.size() - pos) / value / 2);
  return out;
}

// The offsets in `frame` of the FDEs `parsed`'s table names (wrapping alike).
void add_table(EhFrame& frame, const Parsed& parsed) {
  const CfiData& table = parsed.table;
  frame.table.reserve(frame.table.size() + parsed.count);
  if (parsed.encoding == kLinkerTable) {
    const ByteReader r(table.data, table.endian, kEhFrameHdr);
    for (uint64_t i = 0; i < parsed.count; ++i) {
      const auto fde = static_cast<uint64_t>(r.sint_in(i * kLinkerPair + kLinkerPair / 2, 4));
      frame.table.push_back(table.address + fde - frame.cfi.address);
    }
    return;
  }
  const size_t value = encoded_value_size({}, 0, parsed.encoding, table.is_64);
  for (uint64_t i = 0; i < parsed.count; ++i) {
    size_t at = i * 2 * value;
    if (!read_encoded(table, parsed.encoding, at, table.address)) continue;
    if (auto fde = read_encoded(table, parsed.encoding, at, table.address))
      frame.table.push_back(*fde - frame.cfi.address);
  }
}

std::string_view name_of(Elf* elf, size_t names, const GElf_Shdr& sh) {
  const char* n = elf_strptr(elf, names, sh.sh_name);
  return n ? n : "";
}

Bytes bytes_of(Elf_Data* d) {
  if (!d || !d->d_buf) return {};
  return {static_cast<const uint8_t*>(d->d_buf), d->d_size};
}

}  // namespace

std::vector<EhFrame> eh_frames_as_libdw(Elf* elf) {
  std::vector<EhFrame> out;
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf, &eh)) return out;
  const bool is_64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
  const Endian endian = eh.e_ident[EI_DATA] == ELFDATA2MSB ? Endian::Big : Endian::Little;
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return out;
  // Every .eh_frame, with the table of every .eh_frame_hdr that names it: libdw versions
  // differ in which they pair (0.188 takes the first .eh_frame and a header before it, older
  // ones only a PROGBITS .eh_frame).
  std::vector<Header> headers;
  size_t eh_frames = 0, hdrs = 0;  // sections so named, of any type
  bool header_first = false, progbits = false;
  for (Elf_Scn* scn = nullptr; names != 0 && (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const std::string_view name = name_of(elf, names, sh);
    if (name != kEhFrame && name != kEhFrameHdr) continue;
    if (name == kEhFrame) {
      ++eh_frames;
      progbits = sh.sh_type == SHT_PROGBITS;
    } else {
      ++hdrs;
      header_first = eh_frames == 0;
    }
    Elf_Data* data = sh.sh_type == SHT_NOBITS ? nullptr : elf_rawdata(scn, nullptr);
    if (!data || !data->d_buf) continue;
    if (name == kEhFrame) {
      out.push_back({{bytes_of(data), sh.sh_addr, kEhFrame, true, is_64, endian}, {}, {}});
    } else {
      headers.push_back({bytes_of(data), sh.sh_addr});
    }
  }
  if (!out.empty()) {
    for (const Header& h : headers)
      if (auto parsed = parse_header(h, is_64, endian))
        for (EhFrame& frame : out) {
          if (parsed->eh_frame != frame.cfi.address) continue;
          if (eh_frames == 1 && progbits && hdrs == 1 && header_first)
            frame.search = parsed->linker_table;
          // A searched table's FDEs are read as lookups find them, so not listed.
          if (!frame.search) add_table(frame, *parsed);
        }
    return out;
  }
  // Without one, libdw reads the PT_GNU_EH_FRAME segment, and .eh_frame to the end of the file.
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return out;
  size_t file_size = 0;
  const char* file = elf_rawfile(elf, &file_size);
  if (!file) return out;
  const Bytes whole(reinterpret_cast<const uint8_t*>(file), file_size);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_GNU_EH_FRAME) continue;
    if (ph.p_offset > file_size || ph.p_filesz > file_size - ph.p_offset) continue;
    const auto parsed = parse_header({whole.subspan(ph.p_offset, ph.p_filesz), ph.p_vaddr},
                                     is_64, endian);
    if (!parsed) continue;
    const uint64_t at = parsed->eh_frame - ph.p_vaddr + ph.p_offset;
    if (at > file_size) continue;
    out.push_back({{whole.subspan(at), parsed->eh_frame, kEhFrame, true, is_64, endian}, {}, {}});
    add_table(out.back(), *parsed);
  }
  return out;
}

namespace {

// A table entry's field (0: initial location, 1: FDE address): read_encoded for datarel|sdata4,
// which cannot fail inside the table.
uint64_t table_value(const SearchTable& table, const ByteReader& r, size_t entry, size_t field) {
  const size_t at = entry * kLinkerPair + field * (kLinkerPair / 2);
  return table.address + static_cast<uint64_t>(r.sint_in(at, kLinkerPair / 2));
}

SearchHit hit_at(const EhFrame& frame, const ByteReader& r, size_t entry) {
  return SearchHit{entry, table_value(*frame.search, r, entry, 1) - frame.cfi.address};
}

}  // namespace

std::optional<SearchHit> searched_fde(const EhFrame& frame, uint64_t address) {
  if (!frame.search) return std::nullopt;
  const SearchTable& table = *frame.search;
  const ByteReader r(table.pairs, frame.cfi.endian, kEhFrameHdr);
  const auto start = [&](size_t entry) { return table_value(table, r, entry, 0); };
  const size_t entries = table.entries();
  // Not std::upper_bound: libdw stops at the first entry whose successor starts past
  // `address`, and a hostile table need not be sorted.
  size_t l = 0, u = entries;
  while (l < u) {
    const size_t idx = (l + u) / 2;
    if (address < start(idx)) {
      u = idx;
      continue;
    }
    l = idx + 1;
    // The last entry runs to the end of the module.
    if (l < entries && address >= start(l)) continue;
    return hit_at(frame, r, idx);
  }
  return std::nullopt;
}

bool search_ascends(const EhFrame& frame) {
  if (!frame.search) return false;
  const SearchTable& table = *frame.search;
  const ByteReader r(table.pairs, frame.cfi.endian, kEhFrameHdr);
  for (size_t i = 1; i < table.entries(); ++i)
    if (table_value(table, r, i, 0) < table_value(table, r, i - 1, 0)) return false;
  return true;
}

std::optional<SearchHit> searched_fde_from(const EhFrame& frame, uint64_t address, size_t from) {
  if (!frame.search || from >= frame.search->entries()) return searched_fde(frame, address);
  const SearchTable& table = *frame.search;
  const ByteReader r(table.pairs, frame.cfi.endian, kEhFrameHdr);
  const auto start = [&](size_t entry) { return table_value(table, r, entry, 0); };
  if (address < start(from)) return searched_fde(frame, address);
  // The last entry starting at or before `address`: strides of 1, 2, 4... from `from`, then
  // halving inside the last stride. An address in `from`'s function or the next costs two
  // reads or three, where the whole table's binary search costs one cache miss per halving.
  const size_t entries = table.entries();
  size_t lo = from, hi = from + 1;  // start(lo) <= address; start(hi) > address or hi = end
  for (size_t stride = 1; hi < entries && start(hi) <= address; stride *= 2) {
    lo = hi;
    hi = lo + std::min(stride, entries - lo);
  }
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (start(mid) <= address ? lo : hi) = mid;
  }
  return hit_at(frame, r, lo);
}

std::optional<CfiData> debug_frame_as_libdw(Elf* elf) {
  GElf_Ehdr eh;
  size_t names = 0;
  if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &names) != 0) return std::nullopt;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
    const std::string_view name = name_of(elf, names, sh);
    if (name != kDebugFrame && name != kZDebugFrame) continue;
    return CfiData{bytes_of(elf_getdata(scn, nullptr)), sh.sh_addr, kDebugFrame, false,
                   eh.e_ident[EI_CLASS] == ELFCLASS64,
                   eh.e_ident[EI_DATA] == ELFDATA2MSB ? Endian::Big : Endian::Little};
  }
  return std::nullopt;
}

}  // namespace unwindkit::dwarf
