"""`unwindkit sframe dump` must print exactly what GNU readelf --sframe prints (binutils 2.40,
SFrame v1) for sections gcc/gas build at test time: x86_64 PIE executable, shared object and
relocatable object, and AArch64 object and executable. readelf prints no container lines for
--sframe (its output starts at "Contents of the SFrame section"), so the whole output is
compared. `check` must accept every one of them, and `lookup` must find each function."""
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
LIB = os.path.join(SOURCE_DIR, "tests", "integration", "programs", "sframe_lib.c")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


class SFrameReadelf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="uk-sframe-")
        t = cls.tmp
        cls.x86 = []
        gcc = ["gcc", "-O2", "-Wa,--gsframe"]
        run(gcc + ["-fPIE", "-pie", PROGRAM, "-o", f"{t}/prog"])
        run(gcc + ["-fPIC", "-shared", LIB, "-o", f"{t}/lib.so"])
        run(gcc + ["-c", LIB, "-o", f"{t}/lib.o"])
        run(gcc + ["-O0", "-fno-omit-frame-pointer", PROGRAM, "-o", f"{t}/prog-fp"])
        cls.x86 = [f"{t}/prog", f"{t}/lib.so", f"{t}/lib.o", f"{t}/prog-fp"]
        cls.arm = []
        if shutil.which("aarch64-linux-gnu-gcc"):
            agcc = ["aarch64-linux-gnu-gcc", "-O2", "-Wa,--gsframe"]
            run(agcc + ["-c", LIB, "-o", f"{t}/lib-arm.o"])
            run(agcc + ["-fPIC", "-shared", LIB, "-o", f"{t}/lib-arm.so"])
            run(agcc + ["-O0", "-fno-omit-frame-pointer", "-c", PROGRAM, "-o", f"{t}/prog-arm.o"])
            cls.arm = [f"{t}/lib-arm.o", f"{t}/lib-arm.so", f"{t}/prog-arm.o"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compare(self, readelf, path):
        expected = run([readelf, "--sframe", path])
        self.assertTrue(expected.startswith("Contents of the SFrame section .sframe:"), expected)
        ours = run([UNWINDKIT, "sframe", "dump", path])
        self.assertEqual(ours, expected, path)

    def test_x86_64_matches_readelf(self):
        for path in self.x86:
            with self.subTest(path=path):
                self.compare("readelf", path)

    def test_aarch64_matches_readelf(self):
        if not self.arm:
            self.skipTest("no aarch64-linux-gnu-gcc")
        for path in self.arm:
            with self.subTest(path=path):
                self.compare("aarch64-linux-gnu-readelf", path)

    def test_many_functions_match_readelf(self):
        # 3,000 functions: a dump of some 480 KB, written out in many pieces as it is made.
        src = f"{self.tmp}/many.c"
        with open(src, "w") as f:
            for i in range(3000):
                f.write(f"int f{i}(int x) {{ volatile int a[{i % 7 + 1}]; a[0] = x; "
                        f"return a[0] * {i} + x; }}\n")
            f.write("int main(void) { return f1(1); }\n")
        path = f"{self.tmp}/many"
        run(["gcc", "-O1", "-Wa,--gsframe", src, "-o", path])
        self.compare("readelf", path)
        self.assertGreater(len(run(["readelf", "--sframe", path])), 1 << 18)

    def test_check_accepts_gcc_output(self):
        for path in self.x86 + self.arm:
            with self.subTest(path=path):
                p = subprocess.run([UNWINDKIT, "sframe", "check", path], capture_output=True,
                                   text=True)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_lookup_finds_every_function_readelf_lists(self):
        # The function starts and sizes come from readelf's own dump.
        path = self.x86[0]
        text = run(["readelf", "--sframe", path])
        funcs = re.findall(r"pc = (0x[0-9a-f]+), size = (\d+) bytes", text)
        self.assertTrue(funcs)
        for start, size in funcs:
            start = int(start, 16)
            for pc in (start, start + int(size) - 1):
                p = subprocess.run([UNWINDKIT, "sframe", "lookup", path, hex(pc)],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(f"function [{start:#x}, {start + int(size):#x})", p.stdout)

    def test_raw_section_matches_elf(self):
        path = self.x86[0]
        raw = f"{self.tmp}/sframe.bin"
        run(["objcopy", "-O", "binary", "--only-section=.sframe", path, raw])
        addr = None
        for line in run(["readelf", "-SW", path]).splitlines():
            m = re.search(r"\]\s+\.sframe\s+\S+\s+([0-9a-f]+)", line)
            if m:
                addr = int(m.group(1), 16)
        self.assertIsNotNone(addr)
        ours = run([UNWINDKIT, "sframe", "dump", raw, "--raw", "--section-address", hex(addr)])
        self.assertEqual(ours, run(["readelf", "--sframe", path]))

    def test_usage_and_data_errors(self):
        p = subprocess.run([UNWINDKIT, "sframe", "dump"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        p = subprocess.run([UNWINDKIT, "sframe", "lookup", self.x86[0], "zzz"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        p = subprocess.run([UNWINDKIT, "sframe", "dump", "/nonexistent"], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 1)
        bad = f"{self.tmp}/bad.bin"
        with open(bad, "wb") as f:
            f.write(b"\x00" * 40)
        p = subprocess.run([UNWINDKIT, "sframe", "check", bad, "--raw"], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn(".sframe+0x0: sfp_magic", p.stdout)
        for sub in ("dump", "lookup", "check"):
            p = subprocess.run([UNWINDKIT, "sframe", sub, "--help"], capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
