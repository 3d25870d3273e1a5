#!/usr/bin/env python3
"""What the CLI's file arguments may be besides a readable file, and a raw section read from a
pipe. Every command that reads a FILE, given a directory, ends with exit 1 and the system's
own words for it ("Is a directory"), never a signal: the stream reader threw on a directory and
the CLI aborted. `unwindkit dump` of an ELF file, and `sframe dump --raw /dev/stdin` fed the
section through a pipe, print what GNU readelf --sframe prints. The rewriters' output may be
their input, and a hostile alignment costs no disk."""
import errno
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


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw).stdout


class CliInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="uk-cli-inputs-")
        cls.prog = os.path.join(cls.tmp, "prog")
        run(["gcc", "-O2", "-Wa,--gsframe", PROGRAM, "-o", cls.prog])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_directory_is_an_error_not_a_crash(self):
        d = self.tmp
        for args in (["dump", d], ["sframe", "dump", d], ["sframe", "dump", "--json", d],
                     ["sframe", "check", d], ["sframe", "lookup", d, "0x1"],
                     ["sframe", "dump", "--raw", d], ["compact-unwind", "dump", d]):
            with self.subTest(args=args):
                p = subprocess.run([UNWINDKIT, *args], capture_output=True, text=True)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(os.strerror(errno.EISDIR), p.stderr)

    def test_dump_of_an_elf_file_is_readelfs_text(self):
        self.assertEqual(run([UNWINDKIT, "dump", self.prog]),
                         run(["readelf", "--sframe", self.prog]))

    def test_a_raw_section_through_a_pipe(self):
        raw = os.path.join(self.tmp, "sframe.bin")
        run(["objcopy", "-O", "binary", "--only-section=.sframe", self.prog, raw])
        sections = run(["readelf", "-SW", self.prog]).decode()
        address = re.search(r"\]\s+\.sframe\s+\S+\s+([0-9a-f]+)", sections).group(1)
        with open(raw, "rb") as section:
            ours = run([UNWINDKIT, "sframe", "dump", "--raw", "/dev/stdin",
                        "--section-address", "0x" + address], stdin=section)
        self.assertEqual(ours, run(["readelf", "--sframe", self.prog]))

    def test_a_copy_written_onto_its_input(self):
        """`sframe build` and `sframe convert` read their input mapped: a copy onto the input
        itself is written beside it and renamed over it, so it equals a copy made elsewhere."""
        for args in (["build", "--version", "2"], ["convert", "--to-version", "3"]):
            with self.subTest(args=args):
                elsewhere = os.path.join(self.tmp, "elsewhere")
                onto = os.path.join(self.tmp, "onto")
                shutil.copyfile(self.prog, onto)
                run([UNWINDKIT, "sframe", args[0], self.prog, *args[1:], "-o", elsewhere])
                run([UNWINDKIT, "sframe", args[0], onto, *args[1:], "-o", onto])
                with open(elsewhere, "rb") as a, open(onto, "rb") as b:
                    self.assertEqual(a.read(), b.read())
                self.assertFalse([n for n in os.listdir(self.tmp) if "tmp" in n])

    def test_a_huge_segment_alignment_becomes_a_hole(self):
        """A PT_LOAD aligned to 4 GiB puts the new segment 4 GiB into the copy: the gap is a
        hole in the file, not gigabytes written (or held in memory)."""
        hostile = os.path.join(self.tmp, "aligned-4g")
        with open(self.prog, "rb") as f:
            image = bytearray(f.read())
        phoff, = struct.unpack_from("<Q", image, 32)
        phnum, = struct.unpack_from("<H", image, 56)
        for i in range(phnum):
            if struct.unpack_from("<I", image, phoff + 56 * i)[0] == 1:  # PT_LOAD: p_align
                struct.pack_into("<Q", image, phoff + 56 * i + 48, 1 << 32)
        with open(hostile, "wb") as f:
            f.write(image)
        out = hostile + ".sframe"
        run([UNWINDKIT, "sframe", "build", hostile, "-o", out])
        segments = run(["readelf", "-lW", out]).decode()
        self.assertRegex(segments, r"LOAD\s+0x100000000\s")
        st = os.stat(out)
        self.assertGreater(st.st_size, 1 << 32)
        self.assertLess(st.st_blocks * 512, 1 << 20)
        os.remove(out)

if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
