#!/usr/bin/env python3
"""The GDB plugin's side-file cache across sessions (gdb-plugin/README.md, "Side files"):
- the side file is named by the program's build-id, as `readelf -n` prints it;
- a second session attaches the same file without writing it again (same inode), and has not
  loaded the extension (`_unwindkit`) after `info frame-filter`;
- a file without `.sframe` (as `readelf -S` lists its sections; the test's Python binary)
  gets none, and a later session knows so by its build-id without loading the extension;
  the first session, which loads it to learn so, does not map Capstone into GDB
  (/proc/self/maps): the extension loads it when it first decodes an instruction;
- the folder is bounded: past 1 GiB the least recently used side files go (sparse stand-ins
  of 700 MB here), the newest stays, and a private `.tmp-` file left by a GDB that died
  writing it goes once it is an hour old (a fresh one, maybe being written, stays);
- sessions started together on a module too large to wait for (`unwindkit set
  side-file-wait-limit 0`) each start a background maker, and the whole side file is written
  once (inotify counts the renames onto its name)."""
import concurrent.futures
import ctypes
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_gdb_cores  # noqa: E402
from test_gdb_cores import run_gdb  # noqa: E402
from test_gdb_live import build_twins  # noqa: E402

_SIDE_FILE = re.compile(r"^    side file (\S+)", re.MULTILINE)
_STAND_IN = 700 << 20  # two of them exceed the 1 GiB bound, one does not


def side_file(stripped):
    """The side file `unwindkit status` names for `stripped` in a fresh GDB, or None."""
    out = run_gdb("gdb", stripped, commands=["echo @@ST\\n", "unwindkit status"])
    found = _SIDE_FILE.search(out.split("@@ST\n", 1)[-1])
    return found.group(1) if found else None


_EXTENSION = "python print('extension loaded:', '_unwindkit' in sys.modules)"
_CAPSTONE = "python print('capstone mapped:', 'libcapstone' in open('/proc/self/maps').read())"


def extension_loaded(exe):
    """Whether a fresh GDB on `exe` has loaded the extension after `info frame-filter` (which
    asks the `.trace` filter whether any file has `.trace`), whether Capstone is mapped into
    it then, and the output."""
    out = run_gdb("gdb", exe, commands=["python import sys", "info frame-filter", _EXTENSION,
                                        _CAPSTONE, "unwindkit status"])
    return "extension loaded: True" in out, "capstone mapped: True" in out, out


def check_no_sframe(cache):
    """A file without .sframe: no side file, remembered by build-id across sessions."""
    exe = os.path.realpath(sys.executable)
    sections = subprocess.run(["readelf", "-SW", exe], check=True, capture_output=True,
                              text=True).stdout
    if ".sframe" in sections:
        return [f"{exe} has .sframe: pick another file without it"]
    notes = subprocess.run(["readelf", "-n", exe], check=True, capture_output=True,
                           text=True).stdout
    build_id = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
    problems = []
    for session in ("first", "second"):
        loaded, capstone, out = extension_loaded(exe)
        if f"{exe}\n" not in out or "no side file: no .sframe" not in out:
            problems.append(f"{session} session: status does not say {exe} has no .sframe:\n{out}")
        if session == "first" and not loaded:
            problems.append(f"first session on {exe} did not load the extension: nothing "
                            "checked that it leaves Capstone unloaded")
        if session == "second" and loaded:
            problems.append(f"second session on {exe} loaded the extension")
        if capstone:
            problems.append(f"{session} session on {exe} mapped Capstone, which no file needed")
    if not any(n.startswith(build_id + "-") for n in os.listdir(cache)):
        problems.append(f"nothing in {cache} is named by {exe}'s build-id {build_id}")
    return problems


def stand_in(folder, name, age_seconds, size=_STAND_IN):
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.truncate(size)  # sparse: no disk space taken
    then = time.time() - age_seconds
    os.utime(path, (then, then))
    return path


_IN_MOVED_FROM, _IN_MOVED_TO = 0x40, 0x80
_INOTIFY_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len
_MAKERS = 3


def renames_onto(folder, suffix, action):
    """How many files ending with `suffix` (not `.entry` + suffix) were renamed into `folder`
    while `action()` ran (inotify, through libc: the events queue, none is missed). The moves
    out are watched too: alone, the moves onto one name are merged into one event."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, folder.encode(), _IN_MOVED_FROM | _IN_MOVED_TO) < 0:
        raise OSError(ctypes.get_errno(), "inotify")
    try:
        action()
        names = []
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            at = 0
            while at < len(chunk):
                _, mask, _, size = _INOTIFY_EVENT.unpack_from(chunk, at)
                at += _INOTIFY_EVENT.size
                if mask & _IN_MOVED_TO:
                    names.append(chunk[at:at + size].rstrip(b"\0").decode())
                at += size
        return sum(1 for n in names if n.endswith(suffix) and not n.endswith(".entry" + suffix))
    finally:
        os.close(fd)


def makers_running(marker):
    """Processes whose command line holds `marker`: GDB sessions and the makers they forked."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                count += marker.encode() in f.read()
        except OSError:
            pass
    return count


_ATTEMPTS = 3  # sessions that start too far apart on a loaded machine find the file made


def check_one_maker(cache, stripped, build_id):
    """_MAKERS sessions at once on a module too large to wait for: one whole side file made.
    An attempt counts when at least two sessions started a maker (each met the module before
    any maker finished); a loaded machine may stagger them, so up to _ATTEMPTS are made."""
    marker = f"uk-one-maker-{os.getpid()}"

    def sessions():
        with concurrent.futures.ThreadPoolExecutor(_MAKERS) as pool:
            outs = list(pool.map(lambda _: run_gdb(  # the plugin sourced before the file loads
                "gdb", stripped, plugin=False, early=[f"source {test_gdb_cores.plugin_path()}",
                                                      "unwindkit set side-file-wait-limit 0"],
                commands=[f"echo {marker}\\n", "unwindkit status"]), range(_MAKERS)))
        deadline = time.monotonic() + 120
        while makers_running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        return outs

    for _ in range(_ATTEMPTS):
        for name in os.listdir(cache):
            if name.startswith(build_id + "-"):
                os.remove(os.path.join(cache, name))
        outs = []
        made = renames_onto(cache, ".gdb.debug", lambda: outs.extend(sessions()))
        if makers_running(marker):
            return ["background makers still running after 120 s"]
        started = sum("is being made for later sessions" in out for out in outs)
        if started >= 2:
            break
    else:
        return [f"in {_ATTEMPTS} attempts, at most {started} of {_MAKERS} sessions started a "
                "maker: nothing to compare (the sessions did not overlap)"]
    if made != 1:
        return [f"{_MAKERS} sessions at once ({started} makers) wrote the whole side file "
                f"{made} times, not once"]
    return []


def main():
    problems = []
    cache = test_gdb_cores._SIDE_FILES.name  # run_gdb's UNWINDKIT_CACHE_DIR
    with tempfile.TemporaryDirectory(prefix="uk-gdb-cache-") as work:
        _, stripped = build_twins(work)
        notes = subprocess.run(["readelf", "-n", stripped], check=True, capture_output=True,
                               text=True).stdout
        build_id = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)

        first = side_file(stripped)
        if first is None or not os.path.isfile(first):
            return report([f"no side file attached to {stripped}"])
        if not os.path.basename(first).startswith(build_id + "-"):
            problems.append(f"side file {first} is not named by the build-id {build_id}")
        inode = os.stat(first).st_ino

        second = side_file(stripped)
        if extension_loaded(stripped)[0]:
            problems.append("a session with the side file cached loaded the extension")
        if second != first:
            problems.append(f"second session attached {second}, not the cached {first}")
        elif os.stat(second).st_ino != inode:
            problems.append(f"second session wrote {second} again instead of reusing it")

        problems += check_no_sframe(cache)

        os.remove(first)
        oldest = stand_in(cache, "0000-oldest.gdb.debug", 3 * 86400)
        older = stand_in(cache, "0000-older.gdb.debug", 2 * 86400)
        stale_tmp = stand_in(cache, ".tmp-stale", 7200, 10)
        fresh_tmp = stand_in(cache, ".tmp-fresh", 0, 10)
        third = side_file(stripped)
        if third is None or not os.path.isfile(third):
            problems.append("no side file attached after the stand-ins filled the cache")
        if os.path.exists(oldest):
            problems.append("the least recently used side file was kept past the bound")
        if not os.path.exists(older):
            problems.append("a side file was removed though the folder was within the bound")
        if os.path.exists(stale_tmp):
            problems.append("an hour-old private .tmp- file was kept")
        if not os.path.exists(fresh_tmp):
            problems.append("a fresh private .tmp- file (maybe being written) was removed")

        problems += check_one_maker(cache, stripped, build_id)
    return report(problems)


def report(problems):
    for p in problems:
        print("FAIL", p)
    print(f"{len(problems)} side-file cache checks failed" if problems
          else "all side-file cache checks passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
