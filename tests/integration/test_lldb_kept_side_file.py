#!/usr/bin/env python3
"""LLDB plugin's side files kept between sessions (issue I): a later session gets the file made
in an earlier one without remaking or fetching it, and a file rewritten in place never gets a
file made of its earlier content.

The stripped copy of a small program (no symbols, no .eh_frame, .sframe kept) is run to a
breakpoint in a frameless leaf; `bt` must give the PCs LLDB gives on the intact copy, in a
first session (the file is made) and a second one over the same cache folder (the file is
kept: LLDB must take it from the plugin's link in its download cache, and the index must have
remembered the module's content hash). Then the copy is rewritten in place (same path, same
inode) with its `.eh_frame` twin (the same build-id, no SFrame), then with itself with the
`.sframe` magic zeroed (the same build-id and size): each session must get no side file at
all, and its `bt` must be the one LLDB alone gives on that content.

The folder is held to 1 GiB (README, "Kept files"): two files of 700 MiB put there before the
first session, one used two days ago and one a day ago, must leave the older one removed and
the newer one kept when that session adds its file.
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lldb_plugin import SYMBOL_FILE, Lldb, tagged, threads  # noqa: E402
from test_lldb_live import PROGRAM, leaf_address  # noqa: E402
from truth.tools import exit_with, need, run  # noqa: E402

# The index remembers a file's content hash only once its last change is this far past (the
# plugin's rule against a file changed twice within one timestamp tick).
SETTLE_SECONDS = 2.5
SERVED_BYTES = 1 << 30  # the served folder's bound (README)


def symbol_file(output):
    return tagged(output, "SYMBOLS")


def files_under(folder, part):
    return [os.path.join(d, f) for d, _, names in os.walk(folder) for f in names
            if part in os.path.join(d, f)]


def section_offset(path, name):
    """File offset of section `name`, from readelf (a reference tool)."""
    for line in run([need("readelf"), "-SW", path]).stdout.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 4 and fields[1] == name:
            return int(fields[4], 16)
    raise AssertionError(f"readelf shows no {name} in {path}")


def rewrite_in_place(source, target):
    inode = os.stat(target).st_ino
    with open(source, "rb") as src, open(target, "r+b") as dst:
        dst.write(src.read())
        dst.truncate()
    if os.stat(target).st_ino != inode:
        raise AssertionError("the copy was not rewritten in place")


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="unwindkit-lldb-kept-") as work:
        src = os.path.join(work, "kept.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        # Every copy is named `prog`: the breakpoint and the module lookup go by that name.
        for folder in ("intact", "sframe", "ehframe", "run"):
            os.makedirs(os.path.join(work, folder))
        intact = os.path.join(work, "intact", "prog")
        exe = os.path.join(work, "sframe", "prog")
        twin = os.path.join(work, "ehframe", "prog")
        prog = os.path.join(work, "run", "prog")
        run([need("gcc"), "-O2", "-fomit-frame-pointer", "-Wa,--gsframe", src, "-o", intact])
        run([need("strip"), "--strip-all", "-R", ".eh_frame", "-R", ".eh_frame_hdr", intact,
             "-o", exe])
        run([need("strip"), "--strip-all", "-R", ".sframe", intact, "-o", twin])
        shutil.copy2(exe, prog)  # with its mode: it is run
        bp = leaf_address(intact) + 4
        commands = [f"breakpoint set -s prog -a {bp:#x}", "process launch -X false", "bt",
                    SYMBOL_FILE]
        native = Lldb(plugin=False)
        cache = os.path.join(work, "cache")
        ours = Lldb(plugin=True, cache_dir=cache)
        want = threads(native.run(commands, intact))[-1:]
        if not want or len(want[0]) < 8:
            raise AssertionError(f"LLDB on the intact copy stopped with {want}: no truth")
        time.sleep(SETTLE_SECONDS)

        # Files of earlier sessions (sparse: their size costs no disk), named as the plugin
        # names its own.
        served = os.path.join(cache, "served")
        os.makedirs(served, mode=0o700)
        seeds = {}
        for name, days in (("older", 2), ("newer", 1)):
            seeds[name] = os.path.join(served, f"{name:0<40}-{'0' * 32}.v4.lldb.debug")
            with open(seeds[name], "wb") as f:
                f.truncate(700 << 20)
            when = time.time() - days * 86400
            os.utime(seeds[name], (when, when))
        if 2 * (700 << 20) <= SERVED_BYTES:
            raise AssertionError("the seeds do not overfill the folder")

        symbols = {}
        for session in ("made", "kept"):
            out = ours.run(commands, prog)
            got = threads(out)[-1:]
            symbols[session] = symbol_file(out)
            if got != want:
                problems.append(f"{session}: bt {[hex(p) for p in (got[0] if got else [])]}, "
                                f"intact {[hex(p) for p in want[0]]}")
            if not symbols[session] or os.path.basename(symbols[session]) == "prog":
                problems.append(f"{session}: LLDB took no side file ({symbols[session]})")
            if session == "made" and (os.path.exists(seeds["older"]) or
                                      not os.path.exists(seeds["newer"])):
                problems.append("the served folder over its bound: the least recently used file "
                                f"must go, the other stay (older there: "
                                f"{os.path.exists(seeds['older'])}, newer there: "
                                f"{os.path.exists(seeds['newer'])})")
        if len(files_under(cache, "/served/identities/")) != 1:
            problems.append("the index remembered no content hash for the settled module: "
                            "the kept session proves nothing about it")
        kept = [f for f in files_under(cache, ".debug") if f not in seeds.values()]
        if len(kept) != 1:
            problems.append(f"one side file expected in the cache, found {kept}")

        # Rewritten in place (the inode stays, its times and content change): with the
        # `.eh_frame` twin, and with the SFrame copy whose `.sframe` magic is zeroed (the same
        # size, and a section the side file is made from, which now gives none).
        damaged = os.path.join(work, "damaged", "prog")
        os.makedirs(os.path.dirname(damaged))
        shutil.copy2(exe, damaged)
        with open(damaged, "r+b") as f:
            f.seek(section_offset(exe, ".sframe"))
            f.write(b"\0\0")
        for label, source in (("the .eh_frame twin", twin), ("a damaged .sframe", damaged)):
            rewrite_in_place(source, prog)
            time.sleep(SETTLE_SECONDS)
            alone = threads(native.run(commands[:3], source))[-1:]
            out = ours.run(commands, prog)
            got = threads(out)[-1:]
            if os.path.basename(symbol_file(out) or "prog") != "prog":
                problems.append(f"rewritten in place with {label}: LLDB took the side file "
                                f"{symbol_file(out)}, made of the earlier content")
            if got != alone:
                problems.append(f"rewritten in place with {label}: bt "
                                f"{[hex(p) for p in (got[0] if got else [])]}, LLDB alone "
                                f"{[hex(p) for p in (alone[0] if alone else [])]}")
    for p in problems:
        print("FAIL", p)
    if not problems:
        print(f"ok   {len(want[0])} frames as on the intact copy in a made and a kept session "
              f"(symbols {symbols['kept']}); rewritten in place with the .eh_frame twin and "
              "with a damaged .sframe: no side file, LLDB's own frames; the folder kept to "
              "its bound (least recently used out)")
    return 1 if problems else 0


if __name__ == "__main__":
    exit_with(main)
