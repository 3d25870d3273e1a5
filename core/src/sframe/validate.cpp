// validate(): walks the section like decode(), but records each problem and carries on with
// the next record wherever the layout still says where that record is. visit_rule_rows() is
// the same walk, giving out each checked function's rows by rule as it goes.
#include "unwindkit/sframe/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <optional>
#include <system_error>
#include <thread>

#include "read.h"
#include "row_memo.h"
#include "unwindkit/sframe/row.h"
#include "unwindkit/sframe/rule_rows.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe {

namespace {

// Below this many functions one thread checks them all: starting threads would cost more.
constexpr size_t kFunctionsPerShare = 16384;
constexpr unsigned kMaxShares = 8;

class Checker {
 public:
  // With `visit`, each function whose checks found nothing is visited with its rows by rule
  // (visit_rule_rows).
  Checker(Bytes bytes, uint64_t address, const std::vector<AddressRange>& text, Format format,
          const RuleRowsVisit* visit = nullptr)
      : bytes_(bytes), address_(address), text_(text), format_(format), visit_(visit) {}

  // The header's checks; false when no function can be located (nothing else is checked).
  bool check_header() {
    auto endian = detail::section_endian(bytes_, format_);
    if (!endian) return problems_.push_back(endian.error()), false;
    const ByteReader r(bytes_, *endian, format_info(format_).section_name);
    auto header = detail::read_header(r, format_);
    if (!header) return problems_.push_back(header.error()), false;
    section_.header = *header;
    section_.endian = *endian;
    section_.address = address_;
    if (!check_header(*endian)) return false;
    auto fres = r.sub(static_cast<size_t>(header->fre_subsection()), header->fre_len,
                      header->info().header.freoff.name);
    if (!fres) return problems_.push_back(fres.error()), false;
    return true;
  }

  uint32_t function_count() const { return section_.header.num_fdes; }

  // Functions [begin, end)'s checks (after check_header() passed); returns how many rows
  // their FDEs say they hold.
  uint64_t check_functions(size_t begin, size_t end) {
    const Header& h = section_.header;
    const ByteReader r(bytes_, section_.endian, format_info(format_).section_name);
    const ByteReader fres = *r.sub(static_cast<size_t>(h.fre_subsection()), h.fre_len,
                                   h.info().header.freoff.name);
    uint64_t total_fres = 0;
    // Of the last FDE read: for a share that starts past the first, the last one before it
    // that reads.
    std::optional<uint64_t> previous_start;
    for (size_t i = begin; i-- > 0;)
      if (auto fde = detail::read_fde(r, fres, h, i, address_)) {
        previous_start = fde->func_start;
        break;
      }
    // The model holds one function at a time, the one being checked: no check looks back
    // further, and a large section costs no memory.
    Fde& current = section_.fdes.emplace_back();
    for (size_t i = begin; i < end; ++i) {
      auto fde = detail::read_fde(r, fres, h, i, address_);
      if (!fde) {
        problems_.push_back(fde.error());
        continue;
      }
      total_fres += fde->num_fres;
      const size_t problems_before = problems_.size();
      check_fde(*fde, i, previous_start);
      previous_start = fde->func_start;
      current = std::move(*fde);
      section_.words.clear();
      rows_.clear();
      check_fres(fres, i);
      if (visit_ != nullptr && problems_.size() == problems_before)
        (*visit_)(FunctionRules{i, current.start_field, current.func_start, current.size,
                                current.pcmask(),
                                current.pcmask() ? section_.rep_size(current) : 0, rows_},
                  rules_);
    }
    return total_fres;
  }

  void check_row_count(uint64_t total_fres) {
    const Header& h = section_.header;
    if (total_fres != h.num_fres)
      problem(h.info().header.num_fres.at, h.info().header.num_fres.name,
              fmt::format("header says {} FREs, the FDEs hold {}", h.num_fres, total_fres));
  }

  std::vector<Error> take_problems() {
    std::vector<Error> out = std::move(problems_);
    problems_.clear();
    return out;
  }

 private:
  void problem(uint64_t offset, std::string field, std::string message) {
    problems_.push_back(
        Error{section_.header.section_name(), offset, std::move(field), std::move(message)});
  }

  uint8_t known_flags() const { return version_layout(section_.header).known_flags; }

  // False when the layout is unknown or does not fit, so no FDE can be located.
  bool check_header(Endian endian) {
    const Header& h = section_.header;
    const HeaderLayout& f = h.info().header;
    const uint64_t size = bytes_.size();
    if (h.version < kVersion1 || h.version > h.info().last_version) {
      problem(f.version.at, f.version.name, fmt::format("unknown version {}", h.version));
      return false;
    }
    if ((h.flags & ~known_flags()) != 0)
      problem(f.flags.at, f.flags.name,
              fmt::format("unknown flags {:#04x} for version {}", h.flags & ~known_flags(),
                          h.version));
    const bool abi_ok = h.abi_arch >= kAbiAArch64Big && h.abi_arch <= h.info().last_abi;
    if (!abi_ok)
      problem(f.abi_arch.at, f.abi_arch.name, fmt::format("unknown ABI {}", h.abi_arch));
    if (endian != host_endian() && h.auxhdr_len != 0)
      problem(f.auxhdr_len.at, f.auxhdr_len.name,
              "a foreign-endian section cannot carry an aux header (its layout is unknown, so "
              "it cannot be byte-swapped)");
    bool layout_ok = true;
    if (h.size() > size) {
      problem(f.auxhdr_len.at, f.auxhdr_len.name,
              fmt::format("aux header of {} bytes runs past the section end ({:#x} bytes)",
                          h.auxhdr_len, size));
      layout_ok = false;
    }
    const uint64_t fde_begin = h.fde_subsection();
    const uint64_t fde_end = fde_begin + uint64_t{h.num_fdes} * version_layout(h).entry_size;
    if (fde_begin > size) {
      problem(f.fdeoff.at, f.fdeoff.name,
              fmt::format("FDE sub-section at {:#x} starts past the section end ({:#x} bytes)",
                          fde_begin, size));
      layout_ok = false;
    } else if (fde_end > size) {
      problem(f.num_fdes.at, f.num_fdes.name,
              fmt::format("{} FDEs end at {:#x}, past the section end ({:#x} bytes)", h.num_fdes,
                          fde_end, size));
      layout_ok = false;
    }
    const uint64_t fre_begin = h.fre_subsection();
    const uint64_t fre_end = fre_begin + h.fre_len;
    if (fre_begin > size) {
      problem(f.freoff.at, f.freoff.name,
              fmt::format("FRE sub-section at {:#x} starts past the section end ({:#x} bytes)",
                          fre_begin, size));
      layout_ok = false;
    } else if (fre_end > size) {
      problem(f.fre_len.at, f.fre_len.name,
              fmt::format("{} bytes of FREs end at {:#x}, past the section end ({:#x} bytes)",
                          h.fre_len, fre_end, size));
      layout_ok = false;
    }
    if (fde_begin < fre_end && fre_begin < fde_end)
      problem(f.freoff.at, f.freoff.name,
              fmt::format("FRE sub-section [{:#x}, {:#x}) overlaps FDE sub-section [{:#x}, {:#x})",
                          fre_begin, fre_end, fde_begin, fde_end));
    return layout_ok && abi_ok;
  }

  void check_fde(const Fde& fde, size_t i, std::optional<uint64_t> previous_start) {
    const VersionLayout& layout = version_layout(section_.header);
    // Where the FDE's info, info2 and rep_size are: in its entry, or its attribute record.
    const uint64_t info_at = detail::fde_info_offset(section_.header, fde);
    const uint64_t attr = info_at - layout.info_at;
    const uint8_t known_info = layout.known_info;
    if ((fde.info & ~known_info) != 0)
      problem(info_at, detail::fde_field(i, "info"),
              fmt::format("unknown info bits {:#04x}", fde.info & ~known_info));
    if (auto type = detail::check_fre_type(section_.header, fde, i); !type)
      problems_.push_back(type.error());
    if (layout.info2_at != kAbsent && (fde.info2 & kInfo2FdeTypeMask) > kFdeTypeFlex)
      problem(attr + layout.info2_at, detail::fde_field(i, "info2"),
              fmt::format("unknown FDE type {}", fde.info2 & kInfo2FdeTypeMask));
    if (fde.pcmask() && section_.rep_size(fde) == 0)
      problem(attr + layout.rep_size_at, detail::fde_field(i, "rep_size"),
              "a PCMASK function needs a repetition size");
    if (section_.header.sorted() && previous_start && fde.func_start <= *previous_start)
      problem(fde.start_field, detail::fde_field(i, "start"),
              fmt::format("function start {:#x} is not above the previous one ({:#x}) in a "
                          "SORTED section",
                          fde.func_start, *previous_start));
    if (!text_.empty() && !inside_text(fde))
      problem(fde.start_field, detail::fde_field(i, "start"),
              fmt::format("function [{:#x}, {:#x}) is not inside the text", fde.func_start,
                          fde.func_end()));
  }

  bool inside_text(const Fde& fde) const {
    for (const AddressRange& t : text_)
      if (fde.func_start >= t.start && fde.func_start <= t.end &&
          fde.size <= t.end - fde.func_start)
        return true;
    return false;
  }

  // FDE `i`'s rows, each checked against the one before it (the model keeps no rows).
  void check_fres(const ByteReader& fres, size_t i) {
    const Fde& fde = section_.fdes.front();
    // Rows of an unknown FRE type cannot be read (check_fde reported the type).
    if (!detail::check_fre_type(section_.header, fde, i)) return;
    const uint32_t num = fde.num_fres;
    const uint64_t limit = fde.pcmask() ? section_.rep_size(fde) : fde.size;
    const uint8_t known_info = section_.header.info().known_fre_info;
    uint64_t pos = detail::first_fre_pos(section_.header, fde);
    std::optional<uint32_t> previous_start;
    for (size_t j = 0; j < num; ++j) {
      auto fre = detail::read_fre(fres, pos, fde.fre_type(), i, j, format_, section_.words);
      if (!fre) {
        problems_.push_back(fre.error());
        return;  // the next FRE's position is unknown
      }
      if ((fre->info & ~known_info) != 0)
        problem(fre->offset + detail::fre_start_size(fde.fre_type(), format_),
                detail::fre_field(i, j, "info"),
                fmt::format("unused info bits {:#04x} set", fre->info & ~known_info));
      if (previous_start && fre->start_offset <= *previous_start)
        problem(fre->offset, detail::fre_field(i, j, "start"),
                fmt::format("start {:#x} is not above the previous FRE's {:#x}",
                            fre->start_offset, *previous_start));
      previous_start = fre->start_offset;
      // gas gives an empty function one row at offset 0; no PC can ever select it.
      const bool empty_function_row = limit == 0 && fre->start_offset == 0;
      if (fre->start_offset >= limit && !empty_function_row)
        problem(fre->offset, detail::fre_field(i, j, "start"),
                fmt::format("start {:#x} is not below the function's {} {:#x}", fre->start_offset,
                            fde.pcmask() ? "repetition size" : "size", limit));
      // The words must mean something: right count for the ABI, consumed exactly.
      const std::span<const int32_t> words = section_.fre_words(*fre);
      // Rows of one key interpret alike (row_memo.h): each key's words are checked once.
      const auto key = detail::row_key(fde, *fre, words);
      uint32_t rule = 0;  // its index in rules_ (while visiting)
      if (const uint32_t* known = key ? interpreted_.find(*key) : nullptr) {
        rule = *known;
      } else {
        auto row = detail::interpret_words(section_.header, fde.flex(section_.header.version),
                                           fde.fre_type(), *fre, words, i, j);
        if (!row) {
          problems_.push_back(row.error());
          continue;
        }
        if (visit_ != nullptr) rule = add_rule(fde, fre->info, *row);
        // A row of more words than a key holds is not memoized: a rule of its own.
        if (key) interpreted_.insert(*key, rule);
      }
      if (visit_ != nullptr) rows_.push_back({fre->start_offset, rule});
    }
  }

  // The index of a row's rule, added to the table (visit_rule_rows's), lowered as lookup()
  // lowers it but with no function bounds.
  uint32_t add_rule(const Fde& fde, uint8_t fre_info, const Row& row) {
    UnwindRule rule = detail::lower_row(section_.header, fde, fre_info, row);
    rule.func_start = rule.func_end = 0;
    rules_.push_back(std::move(rule));
    return static_cast<uint32_t>(rules_.size() - 1);
  }

  Bytes bytes_;
  uint64_t address_;
  const std::vector<AddressRange>& text_;
  Format format_;
  const RuleRowsVisit* visit_;
  // Keys of rows that interpret: with `visit_`, each with its rule's index in `rules_`.
  detail::RowMemo<uint32_t> interpreted_;
  std::vector<UnwindRule> rules_;
  std::vector<RuleRow> rows_;  // the function being checked, while visiting
  Section section_;
  std::vector<Error> problems_;
};

}  // namespace

std::vector<Error> validate(Bytes bytes, uint64_t section_address,
                            const std::vector<AddressRange>& text, Format format) {
  Checker head(bytes, section_address, text, format);
  if (!head.check_header()) return head.take_problems();
  std::vector<Error> problems = head.take_problems();
  // Each function's checks look back one function at most: contiguous shares on as many
  // threads as the machine has, their problems joined in order (a large section's first
  // frame waits for this).
  const size_t count = head.function_count();
  const size_t shares = std::clamp<size_t>(count / kFunctionsPerShare, 1,
                                           std::clamp(std::thread::hardware_concurrency(), 1u, kMaxShares));
  auto bound = [&](size_t k) { return count * k / shares; };
  std::vector<Checker> checkers(shares, head);
  std::vector<std::future<uint64_t>> others;
  for (size_t k = 1; k < shares; ++k) {
    auto work = [&checkers, k, from = bound(k), to = bound(k + 1)] {
      return checkers[k].check_functions(from, to);
    };
    try {
      others.push_back(std::async(std::launch::async, work));
    } catch (const std::system_error&) {  // no thread to be had: this one does it later
      others.push_back(std::async(std::launch::deferred, work));
    }
  }
  uint64_t total_fres = checkers[0].check_functions(0, bound(1));
  for (auto& other : others) total_fres += other.get();
  for (Checker& checker : checkers) {
    std::vector<Error> found = checker.take_problems();
    problems.insert(problems.end(), std::make_move_iterator(found.begin()),
                    std::make_move_iterator(found.end()));
  }
  head.check_row_count(total_fres);
  for (Error& e : head.take_problems()) problems.push_back(std::move(e));
  return problems;
}

std::vector<Error> visit_rule_rows(Bytes bytes, uint64_t section_address,
                                   const std::vector<AddressRange>& text, Format format,
                                   const RuleRowsVisit& visit) {
  // One thread: the functions are visited in order, and the caller's work on them (the quick
  // file's writer) takes the other cores.
  Checker checker(bytes, section_address, text, format, &visit);
  if (checker.check_header())
    checker.check_row_count(checker.check_functions(0, checker.function_count()));
  return checker.take_problems();
}

}  // namespace unwindkit::sframe
