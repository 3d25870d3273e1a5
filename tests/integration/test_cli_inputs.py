#!/usr/bin/python3.11
"""What the CLI's file arguments may be besides a readable file, and a raw section read from a
pipe. Every command that reads a FILE, given a directory, ends with exit 1 and the system's
own words for it ("Is a directory"), never a signal: the stream reader threw on a directory and
the CLI aborted. `unwindkit dump` of an ELF file, and `sframe dump --raw /dev/stdin` fed the
section through a pipe, print what GNU readelf --sframe prints."""
import errno
import os
import re
import shutil
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

if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
