#!/usr/bin/env python3
"""Compressed cores in an indexed folder (issue D3, item 1): a program's core written by gdb's
`gcore`, compressed by the zstd, xz and lz4 tools and named as systemd-coredump names its
files (`core.NAME.UID.BOOTID.PID.USEC.zst`), is indexed as the plain core is: the program it
mapped is served byte for byte, and a truncated one is skipped with a note naming it."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_debuginfod import Server, build_id  # noqa: E402
from truth.tools import Skip, exit_with, need  # noqa: E402

COMPRESSORS = {"zst": ["zstd", "-q", "-c"], "xz": ["xz", "-c"], "lz4": ["lz4", "-q", "-c"]}


def gcore(prog, core):
    p = subprocess.Popen([prog])
    try:
        time.sleep(0.3)
        subprocess.run([need("gdb"), "-nx", "-batch", "-p", str(p.pid), "-ex", f"gcore {core}"],
                       capture_output=True, timeout=120)
    finally:
        p.kill()
        p.wait()
    return os.path.exists(core)


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-zcore-") as work:
        src, prog = os.path.join(work, "prog.c"), os.path.join(work, "prog")
        with open(src, "w") as f:
            f.write("#include <unistd.h>\nint main(void) { pause(); return 0; }\n")
        subprocess.run(["gcc", "-O1", src, "-o", prog], check=True)
        raw = os.path.join(work, "core.raw")
        if not gcore(prog, raw):
            raise Skip("gdb could not write a core (ptrace not permitted here)")
        bid = build_id(prog)
        with open(prog, "rb") as f:
            program = f.read()
        for ext, tool in COMPRESSORS.items():
            dumps = os.path.join(work, f"dumps-{ext}")
            os.makedirs(dumps)
            name = os.path.join(dumps, f"core.prog.0.0123456789abcdef.4242.1700000000000000.{ext}")
            with open(name, "wb") as out:
                subprocess.run([need(tool[0]), *tool[1:], raw], stdout=out, check=True)
            server = Server([dumps], os.path.join(work, f"cache-{ext}"))
            try:
                status, body = server.get(f"/buildid/{bid}/executable")
            finally:
                server.stop()
            if status != 200 or body != program:
                problems.append(f".{ext}: the program its core mapped gave {status}, "
                                f"{'the same bytes' if body == program else 'other bytes'}")
            # Cut short: not indexed, and said so.
            os.truncate(name, os.path.getsize(name) // 2)
            server = Server([dumps], os.path.join(work, f"cache-{ext}-cut"))
            try:
                status, _ = server.get(f"/buildid/{bid}/executable")
            finally:
                server.stop()
            notes = [line for line in server.log if "compressed core skipped" in line]
            if status != 404 or not notes:
                problems.append(f".{ext} cut in half: {status}, notes {notes}")
            else:
                print(f".{ext}: served; cut in half: {notes[0]}")
    for p in problems:
        print(f"FAIL {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
