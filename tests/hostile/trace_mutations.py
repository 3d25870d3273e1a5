"""Hostile variants of a `.trace` section (Intel traceback), same length.

Record layout from ../shared/notes/formats.md §3. HDR (64-bit): u8 0x0a, u16 major, u8 minor,
u32 size, u64 code begin, u32 file count, u32 code size, u16 module-name length, then per file
u16 length + name. RTN64: u8 0x0c, u8 0, u16 name length, u64 start PC, name.
"""
import struct

from .mutate_bytes import apply, bit_flips, overwrite_run, zero_tail

HDR, RTN64 = 0x0A, 0x0C
HDR_SIZE, HDR_FILES, HDR_CODE_SIZE, HDR_NAME_LEN = 4, 16, 20, 24
HUGE = (0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x10000, 0)


def _offsets_of(data, tag):
    return [i for i, b in enumerate(data) if b == tag]


def header_fields(data, rng):
    """One HDR's record size, file count, code size or name length set huge or zero."""
    hdrs = [i for i in _offsets_of(data, HDR) if data[i + 1:i + 4] == b"\x02\x00\x00"] or [0]
    at = rng.choice(hdrs)
    field = rng.choice([HDR_SIZE, HDR_FILES, HDR_CODE_SIZE, HDR_NAME_LEN])
    if at + field + 4 > len(data):
        return bit_flips(data, rng, 0, len(data))
    if field == HDR_NAME_LEN:
        struct.pack_into("<H", data, at + field, rng.choice([0xFFFF, 0x8000, 0x100]))
    else:
        struct.pack_into("<I", data, at + field, rng.choice(HUGE))
    return f"hdr@{field}"


def routine_fields(data, rng):
    """A routine's name length or start PC made huge (RTN64 records found by their tag)."""
    rtns = [i for i in _offsets_of(data, RTN64) if i + 12 <= len(data) and data[i + 1] == 0]
    if not rtns:
        return bit_flips(data, rng, 0, len(data))
    at = rng.choice(rtns)
    if rng.random() < 0.5:
        struct.pack_into("<H", data, at + 2, rng.choice([0xFFFF, 0x1000, 0]))
        return "rtn-name-len"
    struct.pack_into("<Q", data, at + 4, rng.choice([0, 2**64 - 1, 2**63, 0x401000]))
    return "rtn-start"


def stray_tags(data, rng):
    """Bytes replaced by tags: records start where none was written; PC4/LN4 with huge deltas."""
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data))
        tag = rng.choice([HDR, RTN64, 0x02, 0x03, 0x06, 0x09, 0x0B, 0x0D, 0xBF, 0xFF])
        data[at] = tag
        if tag in (0x06, 0x09) and at + 5 <= len(data):
            struct.pack_into("<I", data, at + 1, rng.choice([0xFFFFFFFF, 0x7FFFFFFF]))
    return "tags"


MUTATIONS = [
    lambda d, r: bit_flips(d, r, 0, len(d)),
    lambda d, r: bit_flips(d, r, 0, min(len(d), 64)),
    overwrite_run, zero_tail, header_fields, routine_fields, stray_tags,
]


def mutate(pristine, rng):
    label, data = apply(pristine, rng, MUTATIONS, [1, 1, 2, 3])
    return "trace:" + label, data
