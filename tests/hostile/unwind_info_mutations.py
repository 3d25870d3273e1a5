"""Hostile variants of a Mach-O `__unwind_info` section, same length.

Layout (Apple's compact_unwind_encoding.h, ../shared/specs): a header of seven u32 (version,
common encodings offset and count, personalities offset and count, index offset and count);
index entries of three u32 (function offset, second-level page offset, LSDA offset), the last
one a sentinel; second-level pages starting with u32 kind (2 regular, 3 compressed), then u16
entry offset and count (and, compressed, u16 encodings offset and count).
Each mutation changes a bytearray in place and returns a label.
"""
import struct

from .mutate_bytes import apply, bit_flips, overwrite_run, zero_tail

HEADER_FIELDS = 7
INDEX_ENTRY = 12
HUGE = (0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x10000, 0xFFFF, 0)


def _u32(data, at):
    return struct.unpack_from("<I", data, at)[0] if at + 4 <= len(data) else None


def _index(data):
    """[(byte offset of entry i, page offset)] of the index the header describes, as far as it
    lies inside the section."""
    at, count = _u32(data, 20), _u32(data, 24)
    if at is None or count is None:
        return []
    return [(at + i * INDEX_ENTRY, _u32(data, at + i * INDEX_ENTRY + 4))
            for i in range(min(count, 4096)) if at + (i + 1) * INDEX_ENTRY <= len(data)]


def header_fields(data, rng):
    """A header count or offset set huge, zero, or just past the end; or the version changed."""
    field = rng.randrange(HEADER_FIELDS)
    value = rng.choice(HUGE + (len(data), len(data) + 1, len(data) - 1)) if field else \
        rng.choice([0, 2, 0xFFFFFFFF])
    struct.pack_into("<I", data, field * 4, value & 0xFFFFFFFF)
    return f"header@{field * 4}"


def index_fields(data, rng):
    """An index entry's function, page or LSDA offset broken: huge, past the end, out of order
    with its neighbour, or pointing at another page's entries."""
    entries = _index(data)
    if not entries:
        return bit_flips(data, rng, 0, len(data))
    at, _ = rng.choice(entries)
    which = rng.randrange(3)
    value = rng.choice(HUGE + (len(data), len(data) - 2, rng.randrange(len(data))))
    struct.pack_into("<I", data, at + 4 * which, value)
    return f"index-{('function', 'page', 'lsda')[which]}"


def page_fields(data, rng):
    """A second-level page's kind, entry offset/count or encodings offset/count broken."""
    pages = [p for _, p in _index(data) if p and p + 12 <= len(data)]
    if not pages:
        return bit_flips(data, rng, 0, len(data))
    page = rng.choice(pages)
    what = rng.randrange(5)
    if what == 0:
        struct.pack_into("<I", data, page, rng.choice([0, 1, 2, 3, 4, 0xFFFFFFFF]))
        return "page-kind"
    struct.pack_into("<H", data, page + 2 + 2 * what, rng.choice([0xFFFF, 0x8000, 0, 1, 0x1000]))
    return f"page@{2 + 2 * what}"


def encodings(data, rng):
    """Encodings replaced by random ones: every mode, register permutations and stack sizes
    that are well formed but wrong, and reserved bits set."""
    start, count = _u32(data, 4), _u32(data, 8)
    n = rng.randint(1, 6)
    for _ in range(n):
        if start is not None and count and start + 4 * count <= len(data) and rng.random() < 0.5:
            at = start + 4 * rng.randrange(count)
        else:
            at = rng.randrange(0, max(1, len(data) - 4))
        struct.pack_into("<I", data, at, rng.getrandbits(32))
    return f"encodings{n}"


def swap_index(data, rng):
    """Two index entries' function offsets swapped: the index no longer in address order."""
    entries = _index(data)
    if len(entries) < 2:
        return bit_flips(data, rng, 0, len(data))
    (a, _), (b, _) = rng.sample(entries, 2)
    fa, fb = _u32(data, a), _u32(data, b)
    struct.pack_into("<I", data, a, fb)
    struct.pack_into("<I", data, b, fa)
    return "index-swap"


MUTATIONS = [
    lambda d, r: bit_flips(d, r, 0, len(d)),
    lambda d, r: bit_flips(d, r, 0, min(len(d), 28)),
    overwrite_run, zero_tail, header_fields, index_fields, page_fields, encodings, swap_index,
]


def mutate(pristine, rng):
    label, data = apply(pristine, rng, MUTATIONS, [1, 1, 2, 3])
    return "unwind_info:" + label, data
