#!/usr/bin/env python3
"""LLDB plugin with a corrupt .sframe (x86_64): the program keeps its .eh_frame, so LLDB can
unwind it on its own. For each corruption, with the plugin loaded LLDB must not crash, `bt`
at a breakpoint must equal LLDB's own `bt` without the plugin (the bad table is not handed
to LLDB), and `unwindkit status` must name the problem at the corrupted byte's offset inside
.sframe (located with `readelf -S`, a reference tool). LLDB asks the plugin's server for the
module's debug file and, refused, for the module itself: that is refused too (404, or no
connection: a server with nothing for any module LLDB named does not listen), LLDB has the
file open (answered, it read the whole module again over the socket).

One more table is valid but costly (repeated_rows.py: a 2 MB PCMASK function repeating its
first row every byte, 2 M rows in a side file): LLDB gets no side file, `bt` is LLDB's own,
and `unwindkit status` names the FDE and its `rep_size` as the reason."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lldb_plugin import Lldb, threads  # noqa: E402
from repeated_rows import repeated_rows_program  # noqa: E402
from truth.tools import exit_with, need, run  # noqa: E402

PROGRAM = r"""
#include <stdio.h>
#define NOINLINE __attribute__((noinline))
volatile long sink;
NOINLINE long leaf(long x) { sink = x; return x * 3; }
NOINLINE long mid(long x) { return leaf(x + 1) + 1; }
NOINLINE long top(long x) { return mid(x + 2) * 2; }
int main(int argc, char **argv) { (void)argv; printf("%ld\n", top(argc)); return 0; }
"""
# Loaded into LLDB: the plugin's server's answer to `/buildid/ID/executable`, at the URL
# `unwindkit status` gives.
PROBE = r"""
import re, urllib.error, urllib.request
import lldb
def executable(debugger, build_id):
    result = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand("unwindkit status", result)
    url = re.search(r"from (http://\S+)", result.GetOutput() or "")
    if url is None:
        print("@@executable no server")
        return
    try:
        with urllib.request.urlopen(f"{url.group(1)}/buildid/{build_id}/executable",
                                    timeout=60) as answer:
            print(f"@@executable {answer.status}")
    except urllib.error.HTTPError as e:
        print(f"@@executable {e.code}")
    except urllib.error.URLError as e:  # not listening: a refusal is LLDB's "not found" too
        print("@@executable refused" if isinstance(e.reason, ConnectionRefusedError)
              else f"@@executable {e.reason}")
"""
SFRAME_HEADER_SIZE = 28  # binutils sframe.h: sframe_header
FDE_SIZE_FIELD = 4       # sframe_func_desc_entry: i32 start address, then u32 size


def section(exe, name):
    """(file offset, size) of a section, from `readelf -SW`."""
    for line in run([need("readelf"), "-SW", exe]).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 6 and parts[1] == name:
            return int(parts[4], 16), int(parts[5], 16)
    raise AssertionError(f"no {name} in {exe}")


def nm_address(exe, symbol):
    for line in run([need("nm"), exe]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == symbol:
            return int(parts[0], 16)
    raise AssertionError(f"nm found no {symbol}")


def corrupt(src_exe, dst_exe, offset, data):
    with open(src_exe, "rb") as f:
        image = bytearray(f.read())
    image[offset:offset + len(data)] = data
    with open(dst_exe, "wb") as f:
        f.write(image)
    os.chmod(dst_exe, 0o755)


def build_id(exe):
    for line in run([need("readelf"), "-n", exe]).stdout.splitlines():
        if "Build ID:" in line:
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no build-id in {exe}")


def last_thread_bt(commands, exe):
    """(LLDB alone's last thread's frames, the plugin's, the plugin run's output) for `commands`
    on `exe`: LLDB alone runs the first three (to `bt`), the plugin's run all of them with
    `unwindkit status` among them. Raises AssertionError when LLDB fails."""
    native = Lldb(plugin=False).run(commands[:3], exe)
    ours = Lldb(plugin=True).run(commands, exe)
    return threads(native)[-1:], threads(ours.split("unwindkit status")[0])[-1:], ours


def repeated_rows_case(work, problems):
    """The 2 MB function made PCMASK, repeating its first row every byte."""
    try:
        exe, address, reason = repeated_rows_program(work)
    except AssertionError as e:
        problems.append(f"repeated rows: {e}")
        return
    commands = [f"breakpoint set -s prog -a {address:#x}", "process launch -X false", "bt",
                "unwindkit status"]
    try:
        want, got, ours = last_thread_bt(commands, exe)
    except AssertionError as e:
        problems.append(f"repeated rows: {e}")
        return
    status = ours.split("unwindkit status", 1)[-1]
    why = f"not installed: {reason}"
    if not want or not want[0]:
        problems.append(f"repeated rows: LLDB alone printed no frame: {want}")
    elif got != want:
        problems.append(f"repeated rows: bt with the plugin {got} differs from LLDB's {want}")
    elif why not in status:
        problems.append(f"repeated rows: status does not say '{why}':\n{status}")
    else:
        print(f"ok   repeated rows: no crash, LLDB's bt kept, status says '{why} ...'")


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="unwindkit-lldb-bad-") as work:
        repeated_rows_case(work, problems)
        src = os.path.join(work, "bad.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        probe = os.path.join(work, "uk_probe.py")
        with open(probe, "w") as f:
            f.write(PROBE)
        good = os.path.join(work, "good")
        run([need("gcc"), "-O2", "-Wa,--gsframe", src, "-o", good])
        sframe_offset, _ = section(good, ".sframe")
        with open(good, "rb") as f:
            f.seek(sframe_offset + 7)
            auxhdr_len = f.read(1)[0]
            f.seek(sframe_offset + 16)
            fdeoff = int.from_bytes(f.read(4), "little")
        fde_size = SFRAME_HEADER_SIZE + auxhdr_len + fdeoff + FDE_SIZE_FIELD
        corruptions = [
            ("unknown version", 2, b"\x7f"),
            ("first function 1 GiB long", fde_size, (1 << 30).to_bytes(4, "little")),
        ]
        bp = nm_address(good, "leaf")
        commands = [f"breakpoint set -s prog -a {bp:#x}", "process launch -X false", "bt",
                    "unwindkit status", f"command script import {probe}",
                    f"script uk_probe.executable(lldb.debugger, '{build_id(good)}')"]
        for what, offset, data in corruptions:
            d = os.path.join(work, f"case{offset}")
            os.makedirs(d)
            exe = os.path.join(d, "prog")
            corrupt(good, exe, sframe_offset + offset, data)
            try:
                want, got, ours = last_thread_bt(commands, exe)
            except AssertionError as e:
                problems.append(f"{what}: {e}")
                continue
            if not want or len(want[0]) < 4:
                problems.append(f"{what}: LLDB alone did not unwind: {want}")
            elif got != want:
                problems.append(f"{what}: bt with the plugin {got} differs from LLDB's {want}")
            status = ours.split("unwindkit status", 1)[-1]
            served = [line for line in ours.splitlines() if line.startswith("@@executable")]
            if f".sframe+0x{offset:x}:" not in status:
                problems.append(f"{what}: status does not name .sframe+0x{offset:x}:\n{status}")
            elif served not in (["@@executable 404"], ["@@executable refused"]):
                problems.append(f"{what}: the server's answer for the module itself: {served}")
            else:
                print(f"ok   {what}: no crash, LLDB's bt kept, status names "
                      f".sframe+0x{offset:x}, the module's own file refused")
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
