// Readers for the parts of __unwind_info, shared by the decoder (which stops at the first
// error) and the validator (which reads every part it can and collects every error).
#pragma once

#include <cstdint>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/compact_unwind/unwind_info.h"

namespace unwindkit::compact_unwind::detail {

ByteReader section_reader(Bytes section);
Result<Header> read_header(const ByteReader& r);
// `count` u32 values at `offset`; `what` names the array in errors ("common_encodings").
Result<std::vector<uint32_t>> read_u32_array(const ByteReader& r, uint64_t offset,
                                             uint32_t count, const char* what);
Result<std::vector<IndexEntry>> read_index(const ByteReader& r, const Header& h);
// The LSDA entries between the first index entry's LSDA offset and the sentinel's.
Result<std::vector<LsdaEntry>> read_lsdas(const ByteReader& r,
                                          const std::vector<IndexEntry>& index);
// The page of index entry `i` (which must not be the sentinel).
Result<Page> read_page(const ByteReader& r, const std::vector<IndexEntry>& index, uint32_t i,
                       const std::vector<uint32_t>& common);

}  // namespace unwindkit::compact_unwind::detail
