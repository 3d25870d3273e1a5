#!/usr/bin/env python3
"""`unwindkit debuginfod -t SECONDS` (issue D3, item 2): a build put into an indexed folder is
served after the next rescan, without a restart, and one removed from it is no longer served
after the next; a core compressed by zstd and named as systemd-coredump names it, dropped into
the folder, has the program it mapped served after the next rescan."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_debuginfod import Server, build_id  # noqa: E402
from test_debuginfod_compressed_cores import gcore  # noqa: E402
from truth.tools import Skip, exit_with, need  # noqa: E402

RESCAN_SECONDS = 1
WAIT_SECONDS = 15  # many rescans' worth: a loaded machine may be slow to make one


def library(work, name):
    src, lib = os.path.join(work, f"{name}.c"), os.path.join(work, f"lib{name}.so")
    with open(src, "w") as f:
        f.write(f"int {name}(int x) {{ return x + 1; }}\n")
    subprocess.run(["gcc", "-shared", "-fPIC", src, "-o", lib], check=True)
    return lib


def program(work):
    """A program that waits to be cored, kept out of the indexed folder."""
    src, prog = os.path.join(work, "prog.c"), os.path.join(work, "prog")
    with open(src, "w") as f:
        f.write("#include <unistd.h>\nint main(void) { pause(); return 0; }\n")
    subprocess.run(["gcc", "-O1", src, "-o", prog], check=True)
    return prog


def status_within(server, bid, want):
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        status, _ = server.get(f"/buildid/{bid}/executable")
        if status == want or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def main():
    problems, cored = [], False
    with tempfile.TemporaryDirectory(prefix="uk-rescan-") as work:
        first, second = library(work, "first"), library(work, "second")
        folder = os.path.join(work, "builds")
        os.makedirs(folder)
        shutil.copy(first, folder)
        server = Server([folder], os.path.join(work, "cache"), extra=("-t", str(RESCAN_SECONDS)))
        try:
            if server.get(f"/buildid/{build_id(first)}/executable")[0] != 200:
                problems.append("the build indexed at start is not served")
            if server.get(f"/buildid/{build_id(second)}/executable")[0] != 404:
                problems.append("a build not yet in the folder is served")
            shutil.copy(second, folder)
            if (s := status_within(server, build_id(second), 200)) != 200:
                problems.append(f"a build put into the folder: {s} after {WAIT_SECONDS} s")
            os.remove(os.path.join(folder, os.path.basename(first)))
            if (s := status_within(server, build_id(first), 404)) != 404:
                problems.append(f"a build removed from the folder: {s} after {WAIT_SECONDS} s")
            prog, raw = program(work), os.path.join(work, "core.raw")
            cored = gcore(prog, raw)
            if cored:
                name = os.path.join(folder, "core.prog.0.0123456789abcdef.4242.1700000000000000.zst")
                subprocess.run([need("zstd"), "-q", raw, "-o", name], check=True)
                if (s := status_within(server, build_id(prog), 200)) != 200:
                    problems.append(f"the program a zstd core dropped into the folder mapped: {s}")
        finally:
            server.stop()
    if not cored and not problems:
        raise Skip("builds served and removed as they should be; gdb could not write the core")
    for p in problems:
        print(f"FAIL {p}")
    if not problems:
        print("a new build served, a removed one no longer, a zstd core's program served, "
              "without a restart")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
