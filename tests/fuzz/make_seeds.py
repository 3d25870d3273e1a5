#!/usr/bin/env python3
"""Writes seed corpora for the libFuzzer targets from the shared vectors and fixtures.

usage: make_seeds.py SHARED_DIR OUT_DIR   ->  OUT_DIR/<fuzz target>/<seed files>
Each target's seeds come from one function below; a new target adds one entry to SEEDS.
"""
import glob
import json
import os
import sys


def sframe_vectors(shared):
    for path in sorted(glob.glob(os.path.join(shared, "vectors/sframe/*.json"))):
        with open(path) as f:
            content = json.load(f).get("content") or []
        if content:
            yield os.path.basename(path), bytes(content)


def elf_fixtures(shared):
    for path in sorted(glob.glob(os.path.join(shared, "fixtures/*/*/*"))):
        with open(path, "rb") as f:
            head = f.read(4)
        if head == b"\x7fELF" and os.path.getsize(path) <= 4 << 20:
            rel = os.path.relpath(path, os.path.join(shared, "fixtures")).replace("/", "_")
            with open(path, "rb") as f:
                yield rel, f.read()


SEEDS = {
    "fuzz_sframe": sframe_vectors,
    "fuzz_elf": elf_fixtures,
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
