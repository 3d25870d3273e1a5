#!/usr/bin/env python3
"""`unwindkit sframe check` on a real .sframe (gcc -Wa,--gsframe, taken out with objcopy) that
is corrupted one class at a time: the check must exit 1 and name the corrupted field at the
byte offset computed here from the layout in shared/notes/formats.md §1 (header 28 bytes,
FDE/FRE sub-sections after header + aux header), never from our decoder. The intact section
must pass, so every case can only fail because of its own corruption."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

UNWINDKIT = os.environ["UNWINDKIT"]
SOURCE_DIR = os.environ["UNWINDKIT_SOURCE_DIR"]
PROGRAM = os.path.join(SOURCE_DIR, "tests", "integration", "programs", "sframe_prog.c")

HEADER = "<HBBBbbBIIIII"  # magic .. freoff, 28 bytes
OFF_VERSION, OFF_FLAGS, OFF_NUM_FDES, OFF_FRE_LEN, OFF_FREOFF = 2, 3, 8, 16, 24
FLAG_SORTED = 0x1
FDE_SIZE = {1: 17, 2: 20}
FRE_START_SIZE = {0: 1, 1: 2, 2: 4}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


class Layout:
    """The parts of the section the corruptions need, read with struct only."""

    def __init__(self, data):
        (self.magic, self.version, self.flags, self.abi, _fp, _ra, auxlen, self.num_fdes,
         self.num_fres, self.fre_len, self.fdeoff, self.freoff) = struct.unpack_from(HEADER, data)
        self.body = 28 + auxlen
        self.fde_size = FDE_SIZE[self.version]

    def fde(self, i):
        return self.body + self.fdeoff + i * self.fde_size

    def fde_fields(self, data, i):
        """(fre_off, num_fres, info) of FDE i (v1/v2: i32 start, u32 size, u32 fre_off, ...)."""
        return struct.unpack_from("<IIB", data, self.fde(i) + 8)

    def first_fre(self, data, i):
        """(offset of FDE i's first FRE, size of its start field)."""
        fre_off, _n, info = self.fde_fields(data, i)
        return self.body + self.freoff + fre_off, FRE_START_SIZE[info & 0xF]


class SFrameCheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="uk-sframe-check-")
        prog = f"{cls.tmp}/prog"
        run(["gcc", "-O2", "-Wa,--gsframe", PROGRAM, "-o", prog])
        raw = f"{cls.tmp}/sframe.bin"
        run(["objcopy", "-O", "binary", "--only-section=.sframe", prog, raw])
        with open(raw, "rb") as f:
            cls.data = f.read()
        cls.address = None
        for line in run(["readelf", "-SW", prog]).splitlines():
            m = re.search(r"\]\s+\.sframe\s+\S+\s+([0-9a-f]+)", line)
            if m:
                cls.address = int(m.group(1), 16)
        cls.layout = Layout(cls.data)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, data):
        path = f"{self.tmp}/case.bin"
        with open(path, "wb") as f:
            f.write(data)
        return subprocess.run([UNWINDKIT, "sframe", "check", "--raw", "--section-address",
                               hex(self.address), path], capture_output=True, text=True)

    def assert_rejected(self, data, offset, field):
        p = self.check(bytes(data))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        # Error lines read ".sframe+0xOFFSET: FIELD: message".
        self.assertIn(f".sframe+{offset:#x}: {field}:", p.stdout, p.stdout + p.stderr)

    def test_gcc_section_is_what_the_cases_assume(self):
        L = self.layout
        self.assertEqual(L.magic, 0xdee2)
        self.assertIn(L.version, FDE_SIZE)
        self.assertTrue(L.flags & FLAG_SORTED)
        self.assertGreaterEqual(L.num_fdes, 2)
        self.assertEqual(L.freoff, L.fdeoff + L.num_fdes * L.fde_size)
        self.assertEqual(len(self.data), L.body + L.freoff + L.fre_len)
        p = self.check(self.data)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_truncated_section(self):
        # One byte short: the FRE sub-section (the last thing) no longer fits.
        self.assert_rejected(self.data[:-1], OFF_FRE_LEN, "sfh_fre_len")

    def test_truncated_header(self):
        # 20 bytes hold magic .. sfh_fre_len; sfh_fdeoff (at 20) is the first short read.
        self.assert_rejected(self.data[:20], 20, "sfh_fdeoff")

    def test_num_fdes_larger_than_data(self):
        d = bytearray(self.data)
        struct.pack_into("<I", d, OFF_NUM_FDES, 0x10000)
        self.assert_rejected(d, OFF_NUM_FDES, "sfh_num_fdes")

    def test_fre_offset_past_end(self):
        d = bytearray(self.data)
        L = self.layout
        fre_off = L.fre_len + 0x40
        struct.pack_into("<I", d, L.fde(0) + 8, fre_off)
        self.assert_rejected(d, L.body + L.freoff + fre_off, "fde[0].fre[0].start")

    def test_overlapping_subsections(self):
        d = bytearray(self.data)
        struct.pack_into("<I", d, OFF_FREOFF, self.layout.fdeoff)
        self.assert_rejected(d, OFF_FREOFF, "sfh_freoff")

    def test_unsorted_fdes_under_sorted(self):
        # Swapping the first two FDE records puts the higher start first.
        d = bytearray(self.data)
        L = self.layout
        a, b = L.fde(0), L.fde(1)
        d[a:a + L.fde_size], d[b:b + L.fde_size] = self.data[b:b + L.fde_size], self.data[a:b]
        self.assert_rejected(d, b, "fde[1].start")

    def test_fre_word_size_code_3(self):
        d = bytearray(self.data)
        fre, start_size = self.layout.first_fre(self.data, 0)
        d[fre + start_size] |= 0x60  # fre_info bits 5-6
        self.assert_rejected(d, fre + start_size, "fde[0].fre[0].info")

    def test_too_many_data_words(self):
        # AMD64 default FREs carry at most 2 words (CFA, FP); 4 stays inside sfh_fre_len.
        self.assertEqual(self.layout.abi, 3)
        d = bytearray(self.data)
        fre, start_size = self.layout.first_fre(self.data, 0)
        info = d[fre + start_size]
        d[fre + start_size] = (info & ~0x1E & 0xFF) | (4 << 1)
        self.assert_rejected(d, fre + start_size, "fde[0].fre[0].info")

    def test_unknown_version(self):
        d = bytearray(self.data)
        d[OFF_VERSION] = 9
        self.assert_rejected(d, OFF_VERSION, "sfp_version")

    def test_unknown_flags(self):
        d = bytearray(self.data)
        d[OFF_FLAGS] |= 0x80
        self.assert_rejected(d, OFF_FLAGS, "sfp_flags")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
