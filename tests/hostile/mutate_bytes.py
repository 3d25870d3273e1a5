"""Format-blind mutations shared by every section: each changes `data` (a bytearray) in place
and returns a label."""


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
