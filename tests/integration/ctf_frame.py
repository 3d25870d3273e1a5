"""CTF Frame twins of real SFrame v1 sections, for tests (no tool writes CTF Frame).

Written from the text of the CTF Frame header patch (../shared/specs/
ctf-frame-v1-header-patch.txt, `include/ctf-frame.h`) and the released v1 layout in
../shared/notes/formats.md, never from unwindkit's reader:

  SFrame v1 (binutils 2.40)                      CTF Frame (the patch)
  header 28 bytes: ..., u8 sfh_auxhdr_len, ...   27 bytes: no auxhdr_len (ctf_frame_header)
  fdeoff/freoff from the end of header + aux     from the end of the header
  FDE start: from the section's start (notes)    the same: the patch's "relative to the
                                                 beginning of the current FDE" is the comment
                                                 released v1 kept, which formats.md says is
                                                 wrong for linked sections
  FDE info bits 0-3 FRE type 0/1/2 (1/2/4 B)     CTF_FRAME_ROW_ENTRY_TYPE_ADDR1/2/4 = 1/2/3
  FDE info bit 5: AArch64 PAuth key B            unused
  FRE info bit 7: mangled RA                     unused
  everything else (magic 0xdee2, version 1, flags 1/2, ABIs 1-3, 17-byte FDE, FRE layout) the
  same.

The FRE sub-section is copied byte for byte; a v1 section using what CTF Frame cannot say
(PAuth key B, a mangled RA, s390x) raises ValueError.
"""
import os
import re
import struct
import subprocess

V1_HEADER = 28
CTF_HEADER = 27
FDE_SIZE = 17
MAGIC = 0xDEE2
CTF_ABIS = (1, 2, 3)  # CTF_FRAME_ABI_AARCH64_ENDIAN_BIG, _LITTLE, CTF_FRAME_ABI_AMD64_ENDIAN_LITTLE


def _order(data):
    (magic,) = struct.unpack_from("<H", data, 0)
    if magic == MAGIC:
        return "<"
    if magic == struct.unpack("<H", struct.pack(">H", MAGIC))[0]:
        return ">"
    raise ValueError(f"not SFrame: magic {magic:#06x}")


def v1_to_ctf(v1, v1_address, ctf_address):
    """The CTF Frame twin of SFrame v1 section bytes `v1` (at `v1_address`), for a section
    placed at `ctf_address`."""
    e = _order(v1)
    (_, version, flags, abi, fixed_fp, fixed_ra, aux_len, num_fdes, num_fres, fre_len, fdeoff,
     freoff) = struct.unpack_from(e + "HBBBbbBIIIII", v1, 0)
    if version != 1:
        raise ValueError(f"SFrame version {version}, not 1")
    if abi not in CTF_ABIS:
        raise ValueError(f"ABI {abi} has no CTF Frame number")
    v1_fdes = V1_HEADER + aux_len + fdeoff
    v1_fres = V1_HEADER + aux_len + freoff
    out = bytearray(struct.pack(e + "HBBBbbIIIII", MAGIC, 1, flags, abi, fixed_fp, fixed_ra,
                                num_fdes, num_fres, fre_len, fdeoff, freoff))
    assert len(out) == CTF_HEADER
    body = bytearray(max(fdeoff + num_fdes * FDE_SIZE, freoff + fre_len))
    fres = v1[v1_fres:v1_fres + fre_len]
    if len(fres) != fre_len:
        raise ValueError("FRE sub-section runs past the section")
    for i in range(num_fdes):
        at = v1_fdes + i * FDE_SIZE
        start, size, fre_off, count, info = struct.unpack_from(e + "iIIIB", v1, at)
        if info & 0x20:
            raise ValueError(f"FDE {i}: PAuth key B has no CTF Frame bit")
        fre_type = info & 0xF
        if fre_type > 2:
            raise ValueError(f"FDE {i}: FRE type {fre_type}")
        ctf_info = (info & 0x10) | (fre_type + 1)  # CTF_FRAME_V1_FUNC_INFO(fde_type, fre_type)
        function = v1_address + start
        struct.pack_into(e + "iIIIB", body, fdeoff + i * FDE_SIZE, function - ctf_address, size,
                         fre_off, count, ctf_info)
        pos = fre_off
        for j in range(count):  # the rows stay as they are: only check what CTF can say
            width = 1 << fre_type
            fre_info = fres[pos + width]
            if fre_info & 0x80:
                raise ValueError(f"FDE {i} FRE {j}: a mangled RA has no CTF Frame bit")
            pos += width + 1 + ((fre_info >> 1) & 0xF) * (1 << ((fre_info >> 5) & 0x3))
    body[freoff:freoff + fre_len] = fres
    return bytes(out + body)


def elf_section(path, name, objcopy="objcopy"):
    """(address, bytes) of section `name` of an ELF file, read with binutils."""
    listing = subprocess.run(["readelf", "-SW", path], check=True, capture_output=True,
                             text=True).stdout
    m = re.search(r"\]\s+" + re.escape(name) + r"\s+\S+\s+([0-9a-f]+)\s", listing)
    if m is None:
        raise ValueError(f"{path} has no {name}")
    dumped = path + f".{name.strip('.')}.bin"
    subprocess.run([objcopy, "--dump-section", f"{name}={dumped}", path, os.devnull],
                   check=True, capture_output=True)
    with open(dumped, "rb") as f:
        data = f.read()
    os.unlink(dumped)
    return int(m.group(1), 16), data


def make_ctf_elf(src, dst, objcopy="objcopy"):
    """A copy of ELF `src` whose `.sframe` (v1) is its CTF Frame twin in `.ctf_frame`, at the
    same address and of the same size: zero bytes after the FRE sub-section stand for the
    header bytes CTF Frame does not have (auxhdr_len), so that the program headers stay
    `src`'s (GDB relocates a PIE on a core only when the file's program headers are those in
    the core's memory, and the twin runs on `src`'s core). Returns (v1, ctf) bytes."""
    address, v1 = elf_section(src, ".sframe", objcopy)
    ctf = v1_to_ctf(v1, address, address)
    blob = dst + ".ctf_frame.bin"
    with open(blob, "wb") as f:
        f.write(ctf + bytes(len(v1) - len(ctf)))
    subprocess.run([objcopy, "--rename-section", ".sframe=.ctf_frame", "--update-section",
                    f".sframe={blob}", src, dst], check=True, capture_output=True)
    os.unlink(blob)
    return v1, ctf
