// decode(): bytes → Section. Stops at the first structural problem (anything that would make
// a later read meaningless); the finer checks are validate()'s (validate.h).
#include <algorithm>
#include <optional>

#include "read.h"
#include "unwindkit/sframe/sframe.h"

namespace unwindkit::sframe {

Result<Section> decode(Bytes bytes, uint64_t section_address, Format format) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const Header& h = layout->header;

  Section s;
  s.header = h;
  s.endian = layout->section.endian();
  s.address = section_address;
  s.fdes.reserve(h.num_fdes);
  // Rows carry one to three words as a rule; every word takes at least a byte, so the
  // sub-section's length bounds what an untrusted header can make this reserve.
  s.words.reserve(std::min<uint64_t>(uint64_t{h.num_fres} * 3, h.fre_len));
  auto walked = detail::for_each_function(
      *layout, section_address, format,
      [&](size_t, Fde& fde, const std::vector<Fre>& rows, const std::vector<int32_t>& words) {
        fde.fres.assign(rows.begin(), rows.end());
        for (Fre& fre : fde.fres) fre.first_word += static_cast<uint32_t>(s.words.size());
        s.words.insert(s.words.end(), words.begin(), words.end());
        s.fdes.push_back(std::move(fde));
      });
  if (!walked) return tl::unexpected(walked.error());
  return s;
}

Result<void> detail::visit_function_ranges(const Layout& layout, uint64_t section_address,
                                           const std::function<bool(const AddressRange&)>& visit) {
  const Header& h = layout.header;
  const VersionLayout& v = version_layout(h);
  // read_layout() has checked that the index lies inside the section: its entries are read
  // unchecked (a module's check visits a million). The start and size are where read_fde()
  // reads them (the rest of a v3 function's record lies among its rows, unread here).
  const ByteReader& r = layout.section;
  const uint64_t first = h.fde_subsection();
  if (!r.holds(static_cast<size_t>(first), uint64_t{h.num_fdes} * v.entry_size))
    return r.short_at(static_cast<size_t>(first), "fdeoff", "the FDE index runs past the end");
  for (size_t i = 0; i < h.num_fdes; ++i) {
    const uint64_t at = first + i * uint64_t{v.entry_size};
    const int64_t start = r.sint_in(static_cast<size_t>(at), v.start_width);
    const uint64_t size = r.uint_in(static_cast<size_t>(at + v.size_at), 4);
    const uint64_t func_start =
        section_address + (h.pcrel() ? at : 0) + static_cast<uint64_t>(start);
    if (!visit({func_start, func_start + size})) break;
  }
  return {};
}

Result<void> visit_function_ranges(Bytes bytes, uint64_t section_address, Format format,
                                   const std::function<bool(const AddressRange&)>& visit) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  return detail::visit_function_ranges(*layout, section_address, visit);
}

Result<FunctionsAround> functions_around(Bytes bytes, uint64_t section_address, Format format,
                                         uint64_t pc) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const bool sorted = layout->header.sorted();
  FunctionsAround out;
  auto visited = detail::visit_function_ranges(*layout, section_address, [&](const AddressRange& fn) {
    if (pc >= fn.start && pc < fn.end) out.holding = fn;
    if (fn.start > pc && (!out.next_start || fn.start < *out.next_start)) out.next_start = fn.start;
    return !out.holding && !(sorted && fn.start > pc);
  });
  if (!visited) return tl::unexpected(visited.error());
  return out;
}

Format detect_format(Bytes bytes) {
  // Where each layout's FRE sub-section ends (FREs come last in every writer's layout).
  auto end = [&](Format format) -> std::optional<uint64_t> {
    auto endian = detail::section_endian(bytes, format);
    if (!endian) return std::nullopt;
    auto h = detail::read_header(ByteReader(bytes, *endian, kSectionName), format);
    if (!h || h->version != kVersion1) return std::nullopt;
    return h->fre_subsection() + h->fre_len;
  };
  const auto ctf = end(Format::CtfFrame);
  if (ctf == bytes.size() && end(Format::SFrame) != bytes.size()) return Format::CtfFrame;
  return Format::SFrame;
}

}  // namespace unwindkit::sframe
