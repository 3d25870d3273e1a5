#!/usr/bin/env python3
"""`unwindkit sframe dump --json` and `sframe lookup --json` against readelf --sframe text.

Sections: a gcc -Wa,--gsframe program (read by GNU readelf 2.40 here) and shared vectors, read
raw with --section-address, whose `groundtruth` is objdump's dump of the same section. The JSON
must carry the keys docs/sframe-json.md documents with their documented types, and say what the
text says: the functions (pc, size), each row's start and its CFA/FP/RA cells. The cells are
rendered in readelf's vocabulary (shared/notes/formats.md §1) and compared with its columns."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

UNWINDKIT = os.environ["UNWINDKIT"]
SOURCE_DIR = os.environ["UNWINDKIT_SOURCE_DIR"]
SHARED_DIR = os.environ["UNWINDKIT_SHARED_DIR"]
PROGRAM = os.path.join(SOURCE_DIR, "tests", "integration", "programs", "sframe_prog.c")

# v1 from binutils 2.40, v2 with PCREL and a PCMASK function, v3 AArch64 with PAC and a B key,
# v3 flexible FDE with an RA in a register and RA-undefined rows.
VECTORS = ["cfi-sframe-common-1-2.40", "test-fp-x86_64-2.45", "cfi-sframe-aarch64-pac-ab-key-1-2.46",
           "cfi-sframe-x86_64-ra-undefined-flex-1-2.46"]

ABI_SP_FP = {1: (31, 29), 2: (31, 29), 3: (7, 6), 4: (15, 11)}
HEADER_KEYS = {"version": int, "flags": int, "flag_names": list, "abi_arch": int, "abi": str,
               "endian": str, "cfa_fixed_fp_offset": int, "cfa_fixed_ra_offset": int,
               "auxhdr_len": int, "num_fdes": int, "num_fres": int, "fre_len": int,
               "fdeoff": int, "freoff": int}
FUNCTION_KEYS = {"index": int, "start": int, "size": int, "end": int, "start_field_value": int,
                 "info": int, "fre_type": int, "pcmask": bool, "rep_size": int,
                 "pauth_key": str, "signal": bool, "flexible": bool, "rows": list}
ROW_KEYS = {"start_offset": int, "info": int, "words": list, "ra_mangled": bool,
            "ra_undefined": bool}
RULE_KEYS = {"arch": str, "source": str, "func_start": int, "func_end": int, "cfa": dict,
             "ra": dict, "fp": dict, "sp_from_cfa": int, "outermost": bool, "ra_mangled": bool,
             "pauth_key": str, "signal_frame": bool, "text": str}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def parse_text(text):
    """readelf/objdump --sframe text -> [(pc, size, [(startpc, cells)], pcmask)]; cells is the
    three column strings, or ("RA undefined",). PCMASK rows (`STARTPC[m]`) print the offset."""
    funcs = []
    for line in text.splitlines():
        m = re.match(r"\s+func idx \[\d+\]: pc = (0x[0-9a-f]+), size = (\d+) bytes", line)
        if m:
            funcs.append((int(m.group(1), 16), int(m.group(2)), [], False))
            continue
        if line.strip().startswith("STARTPC[m]"):
            funcs[-1] = funcs[-1][:3] + (True,)
        m = re.match(r"    ([0-9a-f]{16})  (.*)$", line)
        if m:
            rest = m.group(2).strip()
            cells = (rest,) if rest == "RA undefined" else tuple(rest.split())
            funcs[-1][2].append((int(m.group(1), 16), cells))
    return funcs


def reg_name(abi, reg):
    sp, fp = ABI_SP_FP[abi]
    return {sp: "sp", fp: "fp"}.get(reg, f"r{reg}")


def render_cfa(abi, cfa):
    text = f"{reg_name(abi, cfa['reg'])}{cfa['offset']:+d}"
    return f"({text})" if cfa["kind"] == "deref_reg_offset" else text


def render_slot(abi, version, slot):
    """A SLOT in objdump's words: 2.40 (v1) prints `u` for the fixed AMD64 RA, newer `f`."""
    kind = slot["kind"]
    if kind == "absent":
        return "u"
    if kind == "padding":
        return "U"
    if kind == "fixed":
        return "u" if version == 1 else "f"
    if kind == "at_cfa":
        return f"c{slot['offset']:+d}"
    if kind == "in_reg":
        return f"r{slot['reg']}{slot['offset']:+d}"
    if kind == "at_reg":
        return f"(r{slot['reg']}{slot['offset']:+d})"
    raise AssertionError(f"unknown slot kind {kind}")


def render_row(header, row):
    if row["ra_undefined"]:
        return ("RA undefined",)
    abi, version = header["abi_arch"], header["version"]
    ra_slot = row["ra"]
    # A flexible row without RA words leaves the RA at the header's fixed offset: `f`.
    if ra_slot["kind"] == "absent" and header["cfa_fixed_ra_offset"] != 0:
        ra_slot = {"kind": "fixed"}
    ra = render_slot(abi, version, ra_slot) + ("[s]" if row["ra_mangled"] else "")
    return (render_cfa(abi, row["cfa"]), render_slot(abi, version, row["fp"]), ra)


class SFrameJson(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="uk-sframe-json-")
        cls.prog = f"{cls.tmp}/prog"
        run(["gcc", "-O2", "-Wa,--gsframe", PROGRAM, "-o", cls.prog])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_keys(self, obj, keys, what):
        for key, typ in keys.items():
            self.assertIn(key, obj, what)
            self.assertIsInstance(obj[key], typ, f"{what}.{key}")
            if typ is int:  # bool is an int in Python; the schema keeps them apart
                self.assertNotIsInstance(obj[key], bool, f"{what}.{key}")

    def check_schema(self, doc):
        self.assertEqual(doc["schema"], "unwindkit-sframe-dump/1")
        self.assert_keys(doc["section"], {"name": str, "address": int, "size": int}, "section")
        self.assert_keys(doc["header"], HEADER_KEYS, "header")
        self.assertIn(doc["header"]["abi"], ("aarch64-be", "aarch64-le", "amd64", "s390x"))
        self.assertIn(doc["header"]["endian"], ("little", "big"))
        for f in doc["functions"]:
            self.assert_keys(f, FUNCTION_KEYS, "function")
            self.assertEqual(f["end"], f["start"] + f["size"])
            self.assertIn(f["pauth_key"], ("A", "B"))
            for r in f["rows"]:
                self.assert_keys(r, ROW_KEYS, "row")
                self.assertEqual("address" in r, not f["pcmask"])
                if not r["ra_undefined"] and "error" not in r:
                    self.assert_keys(r, {"cfa": dict, "ra": dict, "fp": dict}, "row")

    def compare(self, doc, text):
        """The JSON says what the text dump says."""
        expected = parse_text(text)
        self.assertTrue(expected, text)
        self.assertEqual(len(doc["functions"]), len(expected))
        for f, (pc, size, rows, pcmask) in zip(doc["functions"], expected):
            self.assertEqual((f["start"], f["size"], f["pcmask"]), (pc, size, pcmask))
            ours = [(r["start_offset"] if pcmask else r["address"], render_row(doc["header"], r))
                    for r in f["rows"]]
            self.assertEqual(ours, rows, f"function at {pc:#x}")

    def dump_json(self, *args):
        doc = json.loads(run([UNWINDKIT, "sframe", "dump", "--json", *args]))
        self.check_schema(doc)
        return doc

    def test_gcc_program_matches_readelf(self):
        doc = self.dump_json(self.prog)
        self.compare(doc, run(["readelf", "--sframe", self.prog]))

    def test_vectors_match_groundtruth(self):
        for name in VECTORS:
            with self.subTest(vector=name):
                with open(os.path.join(SHARED_DIR, "vectors", "sframe", name + ".json")) as f:
                    vec = json.load(f)
                raw = f"{self.tmp}/{name}.bin"
                with open(raw, "wb") as f:
                    f.write(bytes(vec["content"]))
                doc = self.dump_json(raw, "--raw", "--section-address", hex(vec["section_base"]))
                self.assertEqual(doc["section"]["address"], vec["section_base"])
                self.assertEqual(doc["section"]["size"], len(vec["content"]))
                self.compare(doc, vec["groundtruth"])

    def test_lookup_at_each_row_start_matches_readelf(self):
        # AMD64 facts (notes §1): the RA is always at CFA-8; readelf's `u` FP is "not saved".
        rows = 0
        for pc, size, fre_rows, pcmask in parse_text(run(["readelf", "--sframe", self.prog])):
            for start, cells in fre_rows:
                rows += 1
                if pcmask:  # the first block of the repeated rows
                    start += pc
                p = subprocess.run([UNWINDKIT, "sframe", "lookup", self.prog, hex(start), "--json"],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                doc = json.loads(p.stdout)
                self.assertEqual((doc["pc"], doc["found"]), (start, True))
                rule = doc["rule"]
                self.assert_keys(rule, RULE_KEYS, "rule")
                self.assertEqual((rule["arch"], rule["source"]), ("x86_64", "sframe"))
                self.assertEqual((rule["func_start"], rule["func_end"]), (pc, pc + size))
                if cells == ("RA undefined",):
                    self.assertTrue(rule["outermost"])
                    continue
                cfa, fp, ra = cells
                self.assertFalse(rule["outermost"])
                self.assertEqual(render_cfa(3, rule["cfa"]), cfa)
                self.assertEqual(ra, "u")
                self.assertEqual((rule["ra"]["kind"], rule["ra"]["offset"]), ("at_cfa", -8))
                if fp == "u":
                    self.assertEqual(rule["fp"]["kind"], "unchanged")
                else:
                    self.assertEqual(f"c{rule['fp']['offset']:+d}", fp)
                    self.assertEqual(rule["fp"]["kind"], "at_cfa")
        self.assertGreater(rows, 3)

    def test_lookup_outside_every_function(self):
        p = subprocess.run([UNWINDKIT, "sframe", "lookup", self.prog, "0x1", "--json"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual((doc["pc"], doc["found"]), (1, False))
        self.assertNotIn("rule", doc)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
