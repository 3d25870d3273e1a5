"""Format-blind mutations shared by every section: each changes `data` (a bytearray) in place
and returns a label; and the driver every section's `mutate` runs them through."""


def apply(pristine, rng, mutations, counts, *extra):
    """(labels joined by "+", mutated bytes): rng.choice(counts) mutations, each drawn from
    `mutations` and called as m(data, rng, *extra); a flip is added if none changed a byte
    (say, a swap of two equal entries)."""
    data = bytearray(pristine)
    labels = [rng.choice(mutations)(data, rng, *extra) for _ in range(rng.choice(counts))]
    if bytes(data) == pristine:
        labels.append(bit_flips(data, rng, 0, len(data)))
    return "+".join(labels), bytes(data)


def bit_flips(data, rng, begin, end):
    n = rng.randint(1, 8)
    for _ in range(n):
        at = rng.randrange(begin, end)
        data[at] ^= 1 << rng.randrange(8)
    return f"flip{n}"


def overwrite_run(data, rng):
    """A run of 1-32 bytes set to 0x00 or 0xff."""
    value = rng.choice([0x00, 0xFF])
    n = rng.randint(1, 32)
    at = rng.randrange(len(data))
    data[at:at + n] = bytes([value]) * len(data[at:at + n])
    return f"fill{value:02x}x{n}"


def zero_tail(data, rng):
    """Truncation in place: everything from a random offset on becomes zero (same length)."""
    at = rng.randrange(len(data))
    data[at:] = bytes(len(data) - at)
    return "truncate"
