"""Hostile variants of an `.sframe` section: same length, so the mutated bytes go back in place.

Field offsets follow ../shared/notes/formats.md §1: a 28-byte header
(u16 magic, u8 version, u8 flags, u8 abi, i8 fp, i8 ra, u8 auxhdr_len, u32 num_fdes,
u32 num_fres, u32 fre_len, u32 fdeoff, u32 freoff), then the FDE and FRE sub-sections.
Each mutation takes the pristine bytes and a random.Random and returns (label, bytes).
"""
import struct

from .mutate_bytes import apply, bit_flips, overwrite_run, zero_tail

HEADER = struct.Struct("<HBBBbbBIIIII")
FDE_SIZE = {1: 17, 2: 20, 3: 16}
# Header field byte offsets.
VERSION, FLAGS, ABI, AUXHDR_LEN = 2, 3, 4, 7
NUM_FDES, NUM_FRES, FRE_LEN, FDEOFF, FREOFF = 8, 12, 16, 20, 24
HUGE = (0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x10000000, 0x00FFFFFF, 0xFFFF)


class Layout:
    """Where the sub-sections of a well-formed section lie."""

    def __init__(self, data):
        (_, self.version, _, _, _, _, aux, self.num_fdes, self.num_fres, self.fre_len,
         fdeoff, freoff) = HEADER.unpack_from(data)
        self.fde_size = FDE_SIZE[self.version]
        self.fdes = HEADER.size + aux + fdeoff
        self.fres = HEADER.size + aux + freoff

    def fde(self, i):
        return self.fdes + i * self.fde_size

    def fde_field(self, i, name):
        """Byte offset of an FDE field (start, size, fre_off, num_fres, info) of FDE i."""
        if self.version == 3:  # index entry: i64 start, u32 size, u32 fre_off
            return self.fde(i) + {"start": 0, "size": 8, "fre_off": 12}.get(name, 12)
        return self.fde(i) + {"start": 0, "size": 4, "fre_off": 8, "num_fres": 12,
                              "info": 16}[name]


def _put32(data, at, value):
    struct.pack_into("<I", data, at, value & 0xFFFFFFFF)


def _huge(rng, layout, section_len):
    return rng.choice(HUGE + (section_len, section_len + 1, layout.fre_len + 1))


def header_counts(data, rng, layout):
    """num_fdes, num_fres, fre_len, fdeoff or freoff set huge or just past the end."""
    field = rng.choice([NUM_FDES, NUM_FRES, FRE_LEN, FDEOFF, FREOFF])
    _put32(data, field, _huge(rng, layout, len(data)))
    return f"header-huge@{field:#x}"


def shrink_sizes(data, rng, layout):
    """Truncation told by the header: fewer FDEs or a shorter FRE sub-section than there are."""
    field = rng.choice([NUM_FDES, FRE_LEN, NUM_FRES])
    old = struct.unpack_from("<I", data, field)[0]
    _put32(data, field, rng.randrange(0, max(old, 1)))
    return f"header-shrink@{field:#x}"


def overlapping_offsets(data, rng, layout):
    """The sub-sections made to overlap each other or the header."""
    fdeoff, freoff = struct.unpack_from("<II", data, FDEOFF)
    choice = rng.randrange(4)
    if choice == 0:
        _put32(data, FREOFF, fdeoff)  # FREs read from the FDE table
    elif choice == 1:
        _put32(data, FDEOFF, freoff)  # FDEs read from the FRE bytes
    elif choice == 2:
        _put32(data, FREOFF, rng.randrange(0, freoff + 1))
    else:
        _put32(data, FDEOFF, rng.randrange(1, layout.fde_size))  # misaligned table
    return f"overlap-{choice}"


def auxhdr(data, rng, layout):
    data[AUXHDR_LEN] = rng.choice([1, 8, 0x7F, 0xFF])
    return "auxhdr-len"


def bad_version_flags(data, rng, layout):
    """Unknown version, flag bits, ABI, fixed offsets, or the magic byte-swapped."""
    choice = rng.randrange(5)
    if choice == 0:
        data[VERSION] = rng.choice([0, 3 if layout.version != 3 else 2, 4, 0x7F, 0xFF])
    elif choice == 1:
        data[FLAGS] = rng.randrange(256)
    elif choice == 2:
        data[ABI] = rng.choice([0, 1, 2, 4, 5, 0xFF])
    elif choice == 3:
        data[5 + rng.randrange(2)] = rng.choice([0, 0x7F, 0x80, 0xF8, 8])
    else:
        data[0], data[1] = data[1], data[0]  # 0xe2de: read as the other byte order
    return f"version-flags-{choice}"


def fde_fields(data, rng, layout):
    """One FDE's start, size, fre_off or FRE count set huge, zero, or into another FDE's FREs."""
    if layout.num_fdes == 0:
        return bit_flips(data, rng, 0, len(data))
    i = rng.randrange(layout.num_fdes)
    names = ["start", "size", "fre_off", "info"] + (["num_fres"] if layout.version != 3 else [])
    name = rng.choice(names)
    at = layout.fde_field(i, name)
    if name == "info":
        data[at] = rng.randrange(256)
    elif name == "fre_off" and layout.num_fdes > 1 and rng.random() < 0.5:
        other = layout.fde_field(rng.randrange(layout.num_fdes), "fre_off")
        data[at:at + 4] = data[other:other + 4]  # two functions share (part of) their FREs
    else:
        _put32(data, at, rng.choice([0, 1, *HUGE, len(data)]))
    return f"fde-{name}"


def swapped_fdes(data, rng, layout):
    """Two FDEs swapped (breaks the sorted order) or one copied over another (duplicate start)."""
    if layout.num_fdes < 2:
        return bit_flips(data, rng, 0, len(data))
    i, j = rng.sample(range(layout.num_fdes), 2)
    a, b, n = layout.fde(i), layout.fde(j), layout.fde_size
    if rng.random() < 0.5:
        data[a:a + n], data[b:b + n] = data[b:b + n], data[a:a + n]
        return "fde-swap"
    data[b:b + n] = data[a:a + n]
    return "fde-duplicate"


def fre_bytes(data, rng, layout):
    """FRE start offsets and info bytes overwritten (out-of-order starts, size code 3, ...)."""
    end = min(len(data), layout.fres + layout.fre_len)
    if end <= layout.fres:
        return bit_flips(data, rng, 0, len(data))
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(layout.fres, end)
        data[at] = rng.choice([0x00, 0xFF, 0x7F, 0x80, 0x60, 0x1E, rng.randrange(256)])
    return "fre-bytes"


def _fre_words(data, layout, i):
    """[(offset, size)] of the data words of FDE i's FREs (v1/v2 layout)."""
    fre_off, num_fres = struct.unpack_from("<II", data, layout.fde_field(i, "fre_off"))
    start_size = {0: 1, 1: 2, 2: 4}.get(data[layout.fde_field(i, "info")] & 0xF)
    words, at = [], layout.fres + fre_off
    for _ in range(min(num_fres, 256)):
        if start_size is None or at + start_size >= len(data):
            break
        info = data[at + start_size]
        count, size = (info >> 1) & 0xF, 1 << ((info >> 5) & 3)
        at += start_size + 1
        words += [(at + k * size, size) for k in range(count)]
        at += count * size
    return [w for w in words if w[0] + w[1] <= len(data)]


def fre_words(data, rng, layout):
    """A CFA/FP/RA offset changed to another value of its size: the table stays well formed
    (the validator cannot tell), the rules are wrong, so the stepper walks garbage."""
    words = [] if layout.version == 3 else \
        [w for i in range(layout.num_fdes) for w in _fre_words(data, layout, i)]
    if not words:
        return bit_flips(data, rng, 0, len(data))
    for at, size in rng.sample(words, min(len(words), rng.randint(1, 3))):
        value = rng.choice([0, 8, -8, 16, rng.randrange(-(1 << (8 * size - 1)),
                                                         1 << (8 * size - 1))])
        data[at:at + size] = value.to_bytes(size, "little", signed=True)
    return "fre-words"


def flips(data, rng, layout):
    return bit_flips(data, rng, 0, len(data))


def header_flips(data, rng, layout):
    return bit_flips(data, rng, 0, HEADER.size)


def overwrite(data, rng, layout):
    return overwrite_run(data, rng)


def truncate(data, rng, layout):
    return zero_tail(data, rng)


MUTATIONS = [flips, header_flips, overwrite, truncate, shrink_sizes, header_counts,
             overlapping_offsets, auxhdr, bad_version_flags, fde_fields, swapped_fdes,
             fre_bytes, fre_words, fre_words]


def mutate(pristine, rng):
    """(label, mutated bytes): one to three mutations of the section."""
    return apply(pristine, rng, MUTATIONS, [1, 1, 1, 2, 3], Layout(pristine))
