// Decoders for the notes of an ELF core (private to core_file*.cpp): NT_PRSTATUS, NT_FILE,
// NT_AUXV. Each takes the note's descriptor and its file offset (for errors) and bounds-checks
// every field with ByteReader.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "unwindkit/bytes.h"
#include "unwindkit/error.h"
#include "unwindkit/unwind/core_file.h"

namespace unwindkit::unwind::detail {

// Note types of the "CORE" owner (<elf.h>).
inline constexpr uint32_t kNotePrStatus = 1, kNoteAuxv = 6, kNoteFile = 0x46494c45;

// One thread from a 64-bit `struct elf_prstatus`: pr_pid, pr_cursig and pr_reg, with pr_reg
// read as x86_64 `user_regs_struct`, AArch64 `user_pt_regs` or s390x `s390_regs` and mapped to
// DWARF numbers.
Result<CoreThread> decode_prstatus(Bytes desc, uint64_t file_offset, Arch arch, Endian endian);

// NT_FILE: count, page size, `count` (start, end, page offset) triples, then `count` paths.
Result<std::vector<MappedFile>> decode_nt_file(Bytes desc, uint64_t file_offset, Endian endian);

// NT_AUXV: (type, value) pairs up to and without AT_NULL.
Result<std::vector<std::pair<uint64_t, uint64_t>>> decode_auxv(Bytes desc, uint64_t file_offset,
                                                                Endian endian);

}  // namespace unwindkit::unwind::detail
