#!/usr/bin/env python3
"""Writes seed corpora for the libFuzzer targets from the shared vectors and fixtures.

usage: make_seeds.py SHARED_DIR OUT_DIR   ->  OUT_DIR/<fuzz target>/<seed files>
Each target's seeds come from one function below; a new target adds one entry to SEEDS.
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile


def sframe_vectors(shared):
    for path in sorted(glob.glob(os.path.join(shared, "vectors/sframe/*.json"))):
        with open(path) as f:
            content = json.load(f).get("content") or []
        if content:
            yield os.path.basename(path), bytes(content)


def ctf_frame_vectors(shared):
    """CTF Frame twins of the binutils 2.40 (v1) vectors, made by the integration tests'
    helper from the CTF Frame patch's layout; those CTF Frame cannot express are left out."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "integration"))
    from ctf_frame import v1_to_ctf
    for path in sorted(glob.glob(os.path.join(shared, "vectors/sframe/*-2.40.json"))):
        with open(path) as f:
            v = json.load(f)
        try:
            yield os.path.basename(path), v1_to_ctf(bytes(v["content"]), v["section_base"],
                                                    v["section_base"])
        except ValueError:
            continue


def step_inputs(shared):
    """fuzz_step's layout: u8 flags, u64 pc (0x1000 + low 16 bits), u64 sp, u64 fp, u16 stack
    length, the stack bytes (at sp), then an SFrame section decoded at address 0x1000. Each
    little-endian vector's functions (from its groundtruth dump) are moved just above the
    section by adding one shift to every FDE start field (notes §1: both start encodings are
    linear in the field), so a PC at each function's first and last byte finds a rule; the
    stack holds plausible return addresses and saved FPs."""
    import re

    sp = 0x7ffff000
    stack = b"".join(struct.pack("<Q", sp + 0x40 + 8 * i) for i in range(16))
    for path in sorted(glob.glob(os.path.join(shared, "vectors/sframe/*.json"))):
        with open(path) as f:
            vec = json.load(f)
        base = vec.get("section_base", 0)
        funcs = [(int(pc, 16) - base, int(size)) for pc, size in
                 re.findall(r"pc = (0x[0-9a-f]+), size = (\d+) bytes", vec.get("groundtruth", ""))
                 if int(size) > 0]
        section = bytes(vec.get("content") or [])
        if not funcs or section[:2] != b"\xe2\xde":
            continue  # no code to step in, or a big-endian section
        shift = 0x100 - min(start for start, _ in funcs)
        section = shift_fde_starts(section, shift)
        pcs = [pc for start, size in funcs for pc in (start + shift, start + shift + size - 1)]
        for i, pc in enumerate(pc for pc in pcs[:4] if pc <= 0xffff):
            flags = i % 4  # bit 0: trust all registers, bit 1: RA register set
            head = struct.pack("<BQQQH", flags, pc, sp, sp + 16, len(stack))
            yield f"{os.path.basename(path)}.{i}", head + stack + section


def shift_fde_starts(section, shift):
    """Adds `shift` to every FDE's start field of a little-endian section (v1/v2: i32 in
    17/20-byte FDEs, v3: i64 in 16-byte index entries)."""
    data = bytearray(section)
    _magic, version, _flags, _abi, _fp, _ra, auxlen, num_fdes, _nfres, _frelen, fdeoff, _freoff \
        = struct.unpack_from("<HBBBbbBIIIII", data)
    fmt, fde_size = {1: ("<i", 17), 2: ("<i", 20), 3: ("<q", 16)}[version]
    for i in range(num_fdes):
        at = 28 + auxlen + fdeoff + i * fde_size
        struct.pack_into(fmt, data, at, struct.unpack_from(fmt, data, at)[0] + shift)
    return bytes(data)


def elf_fixtures(shared):
    for path in sorted(glob.glob(os.path.join(shared, "fixtures/*/*/*"))):
        with open(path, "rb") as f:
            head = f.read(4)
        if head == b"\x7fELF" and os.path.getsize(path) <= 4 << 20:
            rel = os.path.relpath(path, os.path.join(shared, "fixtures")).replace("/", "_")
            with open(path, "rb") as f:
                yield rel, f.read()


def eh_frame_sections(shared):
    """fuzz_sframe_build: a byte choosing the architecture (bit 0: AArch64), then the .eh_frame
    of each little-endian ELF64 fixture (x86_64 or AArch64)."""
    for rel, image in elf_fixtures(shared):
        if image[4:6] != b"\x02\x01":  # ELFCLASS64, ELFDATA2LSB
            continue
        machine, = struct.unpack_from("<H", image, 18)
        if machine not in (62, 183):
            continue
        shoff, = struct.unpack_from("<Q", image, 40)
        shnum, shstrndx = struct.unpack_from("<HH", image, 60)
        headers = [struct.unpack_from("<IIQQQQ", image, shoff + 64 * i) for i in range(shnum)]
        if shstrndx >= len(headers):
            continue
        names = headers[shstrndx][4]
        for name, _type, _flags, _addr, offset, size in headers:
            if image[names + name:names + name + 10] == b".eh_frame\0":
                yield rel, bytes([machine == 183]) + image[offset:offset + size]


def core_fixtures(shared):
    # The headers and notes sit at the front; the first 64 KiB keeps them and some segments
    # while keeping inputs small enough for libFuzzer to mutate quickly.
    for path in sorted(glob.glob(os.path.join(shared, "fixtures/*/*/core.*"))):
        rel = os.path.relpath(path, os.path.join(shared, "fixtures")).replace("/", "_")
        with open(path, "rb") as f:
            yield rel, f.read(64 << 10)


def cbf_vectors(_shared):
    # shared/notes/formats.md §4, plus one record per word size.
    yield "repeat_limit", bytes.fromhex("02187f8a10000100")
    yield "mixed", bytes.fromhex("02111000201021ff00357fff000010f0446103e829202080111010880901")
    yield "w16", bytes.fromhex("00198000" "20fe" "00")
    yield "w32", bytes.fromhex("0110ff" "2001" "5f" "80" "00")


def trace_vectors(_shared):
    # shared/notes/formats.md §3: a module of each record kind (P = 8), and the short vectors.
    import struct

    def module(records, files=(b"a.c", b"b.c")):
        head = struct.pack("<BHBIQII", 0x0A, 2, 0, 0, 0x401000, len(files), 0x1000) + b"\0\0"
        for f in files:
            head += struct.pack("<H", len(f)) + f
        head += b"\0" * (-len(head) % 8)
        body = head + records
        return body[:4] + struct.pack("<I", len(body)) + body[8:]

    rtn = struct.pack("<BBHQ", 0x0C, 0, 4, 0x401000) + b"main"
    yield "all_records", module(rtn + bytes.fromhex("bf ff02 0406 07ff 05ff00 08ffff 06010000"
                                                    "00 0900000100 0301000000"))
    yield "short", module(bytes.fromhex("bf ff02"), files=())


def macho_builds(shared):
    """Mach-O objects and linked images built from tests/fixtures-src/macho with clang-22
    and ld64.lld-22 (nothing when they are not installed)."""
    if not (shutil.which("clang-22") and shutil.which("ld64.lld-22")):
        return
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../fixtures-src/macho")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ("x86_64", "arm64"):
            for opt in ("-O0", "-O2"):
                obj = os.path.join(tmp, f"frames-{arch}{opt}.o")
                out = obj[:-2] + ".out"
                subprocess.run(["clang-22", "-target", f"{arch}-apple-macos11", opt,
                                "-fno-stack-protector", "-c", os.path.join(src, "frames.c"),
                                "-o", obj], check=True)
                subprocess.run(["ld64.lld-22", "-arch", arch, "-platform_version", "macos",
                                "11.0", "11.0", "-e", "_main", "-o", out, obj], check=True)
                for path in (obj, out):
                    with open(path, "rb") as f:
                        yield os.path.basename(path), f.read()


def unwind_info_sections(shared):
    """The raw __unwind_info of each linked Mach-O seed (found by its section header)."""
    for name, data in macho_builds(shared):
        if not name.endswith(".out"):
            continue
        ncmds, = struct.unpack_from("<I", data, 16)
        pos = 32
        for _ in range(ncmds):
            cmd, cmdsize = struct.unpack_from("<II", data, pos)
            if cmd == 0x19:
                nsects, = struct.unpack_from("<I", data, pos + 64)
                for k in range(nsects):
                    sec = pos + 72 + 80 * k
                    if data[sec:sec + 13] == b"__unwind_info":
                        size, = struct.unpack_from("<Q", data, sec + 40)
                        off, = struct.unpack_from("<I", data, sec + 48)
                        yield name + ".unwind_info", data[off:off + size]
            pos += cmdsize


def prologue_inputs(_shared):
    """fuzz_prologue's layout: u8 architecture (0 x86_64, 1 AArch64, 2 s390x), u8 row count,
    per row u16 start offset, u8 base (bit 0 FP), i16 CFA offset; then the code. The
    functions and CFA columns of tests/unit/prologue_*_test.cpp."""
    functions = [
        (0, [(0x0, 0, 8), (0xb, 0, 16), (0xc, 0, 24), (0x10, 0, 48), (0x24, 0, 24),
             (0x25, 0, 16), (0x27, 0, 8), (0x28, 0, 48), (0x34, 0, 24), (0x35, 0, 16),
             (0x37, 0, 8)],
         "f30f1efa4885ff742f4154534883ec184889fbe8000000004989c44885c075084883c4185b415cc3"
         "4889dfe8000000004883c4185b415cc331c0c3"),
        (1, [(0x0, 0, 0), (0x4, 0, 48), (0x28, 0, 0), (0x2c, 0, 48), (0x40, 0, 0)],
         "fd7bbda9fd030091f35301a9e81300fdf30300aa00000094a00000b4e81340fdf35341a9fd7bc3a8"
         "c0035fd6e00313aa00000094e81340fdf35341a9fd7bc3a8c0035fd6"),
        (2, [(0x0, 0, 160), (0x6, 0, 160), (0xa, 0, 336), (0x22, 0, 160)],
         "eb6ff0300024a7fbff506080f0a0b9040072c0e500000000 6880f0a0eb6ff0e0000407fe"),
    ]
    for arch, rows, code in functions:
        data = bytes([arch, len(rows)])
        for start, base, cfa in rows:
            data += struct.pack("<HBh", start, base, cfa)
        yield f"prologue-{arch}", data + bytes.fromhex(code.replace(" ", ""))


SEEDS = {
    "fuzz_sframe": sframe_vectors,
    "fuzz_ctf_frame": ctf_frame_vectors,
    "fuzz_elf": elf_fixtures,
    "fuzz_synthesize": elf_fixtures,
    "fuzz_sframe_build": eh_frame_sections,
    "fuzz_macho": macho_builds,
    "fuzz_compact_unwind": unwind_info_sections,
    "fuzz_core": core_fixtures,
    "fuzz_cbf": cbf_vectors,
    "fuzz_trace": trace_vectors,
    "fuzz_step": step_inputs,
    "fuzz_prologue": prologue_inputs,
}


def main():
    shared, out = sys.argv[1], sys.argv[2]
    for target, source in SEEDS.items():
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for name, data in source(shared):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
