"""Where a section lies in an ELF file, and a core's loaded segments (ELF64 little-endian)."""
import struct

PT_LOAD = 1


def section(path, name):
    """(file offset, size) of the section `name`, or None, from the section header table."""
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        return struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)

    strtab_off = header(shstrndx)[4]
    for i in range(shnum):
        sh_name, _, _, _, offset, size = header(i)
        end = data.index(b"\0", strtab_off + sh_name)
        if data[strtab_off + sh_name:end].decode() == name:
            return offset, size
    return None


def load_segments(path):
    """[(vaddr, file offset, file size)] of the PT_LOAD segments of a core."""
    with open(path, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    segments = []
    for i in range(phnum):
        p_type, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type == PT_LOAD and filesz:
            segments.append((vaddr, offset, filesz))
    return segments


def file_offset(segments, address, length=8):
    """The core-file offset holding [address, address + length), or None."""
    for vaddr, offset, filesz in segments:
        if vaddr <= address and address + length <= vaddr + filesz:
            return offset + address - vaddr
    return None
