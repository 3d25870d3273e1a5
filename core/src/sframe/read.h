// Record readers shared by the decoder and the validator: each reads one header, FDE or FRE
// at a given position and returns it or the Error for the first byte it could not read. The
// decoder stops at the first Error; the validator records it and moves on to the next record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "unwindkit/bytes.h"
#include "unwindkit/sframe/section.h"

namespace unwindkit::sframe::detail {

// The byte order the magic says; an Error if it is neither order of 0xdee2.
Result<Endian> section_endian(Bytes bytes);

// The 28-byte header (the magic already checked by section_endian).
Result<Header> read_header(const ByteReader& section);

size_t fde_size(uint8_t version);
// The size of the FRE start field for an FDE's FRE type; 0 for an unknown type.
size_t fre_start_size(uint8_t fre_type);

std::string fde_field(size_t fde, std::string_view field);
std::string fre_field(size_t fde, size_t fre, std::string_view field);

// FDE `index`: its index entry, and for v3 its attribute record inside `fres` (the FRE
// sub-section reader); the function start resolved against `section_address`. No FREs.
Result<Fde> read_fde(const ByteReader& section, const ByteReader& fres, const Header& header,
                     size_t index, uint64_t section_address);

// Position inside the FRE sub-section of an FDE's first FRE.
uint64_t first_fre_pos(const Header& header, const Fde& fde);

// The FRE at `pos` inside the FRE sub-section `fres`; advances `pos` past it.
Result<Fre> read_fre(const ByteReader& fres, uint64_t& pos, uint8_t fre_type, size_t fde_index,
                     size_t fre_index);

}  // namespace unwindkit::sframe::detail
