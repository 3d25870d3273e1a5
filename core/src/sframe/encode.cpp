#include "unwindkit/sframe/encode.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "read.h"

namespace unwindkit::sframe {

namespace {

// Appends integers in the section's byte order.
class Writer {
 public:
  explicit Writer(Endian endian) : endian_(endian) {}

  void put(uint64_t v, size_t width) {
    for (size_t i = 0; i < width; ++i) {
      const size_t shift = endian_ == Endian::Little ? i : width - 1 - i;
      out_.push_back(static_cast<uint8_t>(v >> (8 * shift)));
    }
  }
  size_t size() const { return out_.size(); }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  Endian endian_;
  std::vector<uint8_t> out_;
};

// The narrowest FRE start field for a function, chosen as binutils does (by the function
// size: `sframe_calc_fre_type`), widened if some row starts past it (PCMASK blocks).
uint8_t fre_type_for(const Fde& fde) {
  uint64_t need = fde.size;
  for (const Fre& fre : fde.fres) need = std::max<uint64_t>(need, uint64_t{fre.start_offset} + 1);
  if (need <= std::numeric_limits<uint8_t>::max()) return kFreTypeAddr1;
  if (need <= std::numeric_limits<uint16_t>::max()) return kFreTypeAddr2;
  return kFreTypeAddr4;
}

// An FDE the target cannot hold, reported at its index entry in the source section.
tl::unexpected<Error> cannot(const Section& s, size_t fde, std::string_view field,
                             std::string message) {
  return fail(kSectionName, s.fdes[fde].start_field, detail::fde_field(fde, field),
              std::move(message));
}

// What a v1/v2 FDE cannot carry, and s390x words that v2 and v3 read differently (v2: an odd RA
// or FP word names a register; v3 default FDEs have no such encoding).
Result<void> check_expressible(const Section& s, const Fde& fde, size_t i, uint8_t version) {
  const uint8_t from = s.header.version;
  if (version < kVersion3 && fde.flex(from))
    return cannot(s, i, "info2", "a flexible FDE has no v1/v2 encoding");
  if (version < kVersion3 && fde.signal(from))
    return cannot(s, i, "info", "the signal-frame bit has no v1/v2 encoding");
  if (s.is_s390x() && (from == kVersion2) != (version == kVersion2) && !fde.flex(from))
    for (const Fre& fre : fde.fres) {
      const auto words = s.fre_words(fre);
      for (size_t w = 1; w < words.size(); ++w)
        if ((words[w] & kS390xRegisterFlag) != 0)
          return cannot(s, i, "fres", "an s390x register word changes meaning between v2 and v3");
    }
  return {};
}

}  // namespace

Result<std::vector<uint8_t>> encode(const Section& s, const EncodeOptions& options) {
  const uint8_t version = options.version;
  if (version < kVersion1 || version > kVersion3)
    return fail(kSectionName, kOffVersion, "sfp_version",
                fmt::format("cannot write version {} (only 1, 2 and 3)", version));
  if (s.header.auxhdr_len != 0)
    return fail(kSectionName, kOffAuxHdrLen, "sfh_auxhdr_len",
                "the aux header's bytes are not kept by the decoder");
  // v1 has no PCREL flag: its starts are always relative to the section.
  const bool pcrel = version == kVersion3 || (version == kVersion2 && options.pcrel);

  // The FRE sub-section first: it fixes each FDE's fre_off and fre_type.
  Writer fres(s.endian);
  struct Placed {
    uint32_t fre_off;
    uint8_t info;
    uint8_t rep_size;
  };
  std::vector<Placed> placed(s.fdes.size());
  // Functions' rows go in the source's order, which need not be the index's: ld sorts the
  // index by address but appends the rows of the PLT entries it makes after those of the
  // input objects. Keeping the order lets a section binutils wrote re-encode to its own bytes.
  std::vector<size_t> order(s.fdes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return s.fdes[a].fre_off < s.fdes[b].fre_off; });
  uint64_t num_fres = 0;
  for (size_t i : order) {
    const Fde& fde = s.fdes[i];
    if (auto ok = check_expressible(s, fde, i, version); !ok) return tl::unexpected(ok.error());
    const uint8_t type = fre_type_for(fde);
    const uint8_t info = static_cast<uint8_t>((fde.info & ~kInfoFreTypeMask) | type);
    if (fres.size() > std::numeric_limits<uint32_t>::max())
      return cannot(s, i, "fre_off", "the FRE sub-section outgrows a u32 offset");
    // PCMASK functions need a block size; v1 implies it (16 on AMD64) and v2/v3 store it.
    const uint8_t rep_size =
        fde.pcmask() ? static_cast<uint8_t>(s.rep_size(fde)) : fde.rep_size;
    placed[i] = {static_cast<uint32_t>(fres.size()), info, rep_size};
    if (version == kVersion3) {
      if (fde.fres.size() > std::numeric_limits<uint16_t>::max())
        return cannot(s, i, "num_fres", "more FREs than v3's u16 count holds");
      fres.put(fde.fres.size(), 2);
      fres.put(info, 1);
      fres.put(fde.info2, 1);
      fres.put(rep_size, 1);
    }
    for (const Fre& fre : fde.fres) {
      fres.put(fre.start_offset, detail::fre_start_size(type));
      fres.put(fre.info, 1);
      const size_t word_size = size_t{1} << fre.word_size_code();
      for (int32_t w : s.fre_words(fre)) fres.put(static_cast<uint32_t>(w), word_size);
    }
    num_fres += fde.fres.size();
  }
  const uint64_t fde_bytes = s.fdes.size() * uint64_t{version_layout(version).entry_size};
  if (fres.size() > std::numeric_limits<uint32_t>::max() ||
      fde_bytes > std::numeric_limits<uint32_t>::max() ||
      num_fres > std::numeric_limits<uint32_t>::max())
    return fail(kSectionName, kOffFreLen, "sfh_fre_len", "the section outgrows u32 offsets");

  uint8_t flags = s.header.flags & ~kFlagFdeFuncStartPcrel;
  if (version == kVersion3) flags &= ~kFlagFramePointer;  // v3 has no such flag
  if (pcrel) flags |= kFlagFdeFuncStartPcrel;

  Writer out(s.endian);
  out.put(kMagic, 2);
  out.put(version, 1);
  out.put(flags, 1);
  out.put(s.header.abi_arch, 1);
  out.put(static_cast<uint8_t>(s.header.cfa_fixed_fp_offset), 1);
  out.put(static_cast<uint8_t>(s.header.cfa_fixed_ra_offset), 1);
  out.put(0, 1);  // auxhdr_len
  out.put(s.fdes.size(), 4);
  out.put(num_fres, 4);
  out.put(fres.size(), 4);
  out.put(0, 4);  // fdeoff: the index follows the header
  out.put(fde_bytes, 4);

  for (size_t i = 0; i < s.fdes.size(); ++i) {
    const Fde& fde = s.fdes[i];
    // PCREL: relative to this FDE's start field; otherwise to the section start (notes §1).
    const uint64_t base = options.address + (pcrel ? out.size() : 0);
    const auto value = static_cast<int64_t>(fde.func_start - base);
    if (version == kVersion3) {
      out.put(static_cast<uint64_t>(value), 8);
      out.put(fde.size, 4);
      out.put(placed[i].fre_off, 4);
      continue;
    }
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      return cannot(s, i, "start", fmt::format("function {:#x} is out of i32 reach of {:#x}",
                                            fde.func_start, base));
    out.put(static_cast<uint32_t>(value), 4);
    out.put(fde.size, 4);
    out.put(placed[i].fre_off, 4);
    out.put(fde.fres.size(), 4);
    out.put(placed[i].info, 1);
    if (version == kVersion1) continue;
    out.put(placed[i].rep_size, 1);
    out.put(0, 2);  // padding
  }
  std::vector<uint8_t> bytes = out.take();
  const std::vector<uint8_t> tail = fres.take();
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  return bytes;
}

}  // namespace unwindkit::sframe
