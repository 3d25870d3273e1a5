"""Where a section lies in a thin 64-bit little-endian Mach-O file (the fixtures ld64.lld-22
links here)."""
import struct

MH_MAGIC_64 = 0xFEEDFACF
LC_SEGMENT_64 = 0x19
SEGMENT_HEADER, SECTION_HEADER = 72, 80


def section(path, name):
    """(file offset, size) of the section `name` (in any segment), or None."""
    with open(path, "rb") as f:
        data = f.read()
    magic, _, _, _, ncmds, _, _, _ = struct.unpack_from("<IiiIIIII", data, 0)
    if magic != MH_MAGIC_64:
        return None
    at = 32
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<II", data, at)
        if cmd == LC_SEGMENT_64:
            nsects, = struct.unpack_from("<I", data, at + 64)
            for i in range(nsects):
                s = at + SEGMENT_HEADER + i * SECTION_HEADER
                sectname = data[s:s + 16].rstrip(b"\0").decode()
                size, = struct.unpack_from("<Q", data, s + 40)
                offset, = struct.unpack_from("<I", data, s + 48)
                if sectname == name:
                    return offset, size
        at += cmdsize
    return None
