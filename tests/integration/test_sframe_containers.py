#!/usr/bin/env python3
"""The ELF container in its other shapes: ELF32 and big-endian files carrying .sframe. Their
`unwindkit sframe dump` must equal GNU readelf --sframe on the same file, `check` must accept
them, and `lookup` must find each function readelf lists in the linked ones.

- ELF32: gas refuses --gsframe for x32 ("not supported for target"), so an x86-64 object and
  shared object are converted with `objcopy -O elf32-x86-64` (section bytes unchanged).
- Big-endian: `objcopy` cannot change an AArch64 file's byte order, but
  `aarch64-linux-gnu-gcc -mbig-endian` builds one; gas then writes the .sframe big-endian too
  (ABI 1, AArch64 BE). The cross sysroot has no big-endian libc headers, so the source here
  includes nothing and links with -nostdlib."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

UNWINDKIT = os.environ["UNWINDKIT"]

SOURCE = r"""
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
int twice(int (*f)(int), int x) {
  volatile char b[256];
  b[x & 255] = (char)x;
  return f(f(x)) + b[3];
}
"""


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


class SFrameContainers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="uk-sframe-containers-")
        t = cls.tmp
        with open(f"{t}/f.c", "w") as f:
            f.write(SOURCE)
        gcc = ["gcc", "-O2", "-Wa,--gsframe"]
        run(gcc + ["-c", f"{t}/f.c", "-o", f"{t}/x64.o"])
        run(gcc + ["-fPIC", "-shared", "-nostdlib", f"{t}/f.c", "-o", f"{t}/x64.so"])
        for name in ("x64.o", "x64.so"):
            run(["objcopy", "-O", "elf32-x86-64", f"{t}/{name}", f"{t}/x32{name[3:]}"])
        cls.elf32 = [f"{t}/x32.o", f"{t}/x32.so"]
        cls.big = []
        if shutil.which("aarch64-linux-gnu-gcc"):
            agcc = ["aarch64-linux-gnu-gcc", "-mbig-endian", "-O2", "-Wa,--gsframe"]
            run(agcc + ["-c", f"{t}/f.c", "-o", f"{t}/be.o"])
            run(agcc + ["-fPIC", "-shared", "-nostdlib", f"{t}/f.c", "-o", f"{t}/be.so"])
            cls.big = [f"{t}/be.o", f"{t}/be.so"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compare(self, readelf, path, elf_class, data):
        header = run([readelf, "-hW", path])
        self.assertRegex(header, rf"Class:\s+{elf_class}\n")
        self.assertRegex(header, rf"Data:\s+2's complement, {data}\n")
        expected = run([readelf, "--sframe", path])
        self.assertTrue(expected.startswith("Contents of the SFrame section .sframe:"), expected)
        self.assertIn("func idx [1]", expected)
        self.assertEqual(run([UNWINDKIT, "sframe", "dump", path]), expected)
        p = subprocess.run([UNWINDKIT, "sframe", "check", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        if path.endswith(".so"):
            self.lookup_every_function(path, expected)

    def lookup_every_function(self, path, readelf_text):
        funcs = re.findall(r"pc = (0x[0-9a-f]+), size = (\d+) bytes", readelf_text)
        for start, size in funcs:
            start, end = int(start, 16), int(start, 16) + int(size)
            p = subprocess.run([UNWINDKIT, "sframe", "lookup", path, hex(end - 1)],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn(f"function [{start:#x}, {end:#x})", p.stdout)

    def test_elf32_matches_readelf(self):
        for path in self.elf32:
            with self.subTest(path=path):
                self.compare("readelf", path, "ELF32", "little endian")

    def test_big_endian_matches_readelf(self):
        if not self.big:
            self.skipTest("no aarch64-linux-gnu-gcc")
        for path in self.big:
            with self.subTest(path=path):
                self.compare("aarch64-linux-gnu-readelf", path, "ELF64", "big endian")
                # The section itself is big-endian: magic 0xdee2 stored as de e2.
                raw = f"{path}.sframe"
                run(["aarch64-linux-gnu-objcopy", "-O", "binary", "--only-section=.sframe", path,
                     raw])
                with open(raw, "rb") as f:
                    self.assertEqual(f.read(2), b"\xde\xe2")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
