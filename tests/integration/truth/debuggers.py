"""Backtraces from GDB and LLDB: the truth (GDB on the intact core) and the debuggers alone
on the stripped core."""
import dataclasses
import os
import re

from .tools import lldb, need, run

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass
class Thread:
    tid: int
    pcs: list  # frame PCs, innermost first
    names: list  # symbol names ("??" when unknown)
    stop: str = ""
    sp: int = 0  # frame #0's stack pointer (GDB only)
    sources: list = dataclasses.field(default_factory=list)  # per frame: cfi|sframe|fp (ours)


def _gdb_threads(arch, build, core, timeout):
    search = ["-iex", f"set solib-search-path {':'.join(build.search_dirs)}"] \
        if build.search_dirs else []
    p = run([need(arch.gdb), "-batch", "-nx", "-iex", "set pagination off", *search, "-x",
             os.path.join(HERE, "gdb_frames.py"), build.exe, core], timeout=timeout,
            check=False)
    threads = {}
    for line in p.stdout.splitlines():
        parts = line.split(maxsplit=4)
        if len(parts) == 3 and parts[0] == "SP":
            threads.setdefault(int(parts[1]), Thread(int(parts[1]), [], [])).sp = \
                int(parts[2], 16)
        elif len(parts) >= 4 and parts[0] == "FRAME":
            t = threads.setdefault(int(parts[1]), Thread(int(parts[1]), [], []))
            t.pcs.append(int(parts[3], 16))
            t.names.append(parts[4] if len(parts) > 4 else "??")
        elif len(parts) >= 2 and parts[0] == "END" and int(parts[1]) in threads:
            threads[int(parts[1])].stop = line.split(maxsplit=2)[2] if len(parts) > 2 else ""
    if not threads:
        raise RuntimeError(f"{arch.gdb} printed no frames for {core}:\n{p.stdout}\n{p.stderr}")
    return list(threads.values())


def gdb_truth(pair, core, timeout=300):
    """GDB's frames on the intact twin's core: the expected backtrace of every thread."""
    return _gdb_threads(pair.arch, pair.intact, core, timeout)


def gdb_alone(pair, core, timeout=300):
    """GDB's frames on the stripped twin's core, without help."""
    return _gdb_threads(pair.arch, pair.stripped, core, timeout)


_LLDB_THREAD = re.compile(r"^\*?\s*thread #\d+: tid = (0x[0-9a-fA-F]+|\d+)")
_LLDB_FRAME = re.compile(r"^\s*\*?\s*frame #(\d+): (0x[0-9a-fA-F]+)")


def lldb_alone(pair, core, timeout=300):
    """LLDB's frames on the stripped twin's core, without help."""
    # The default thread line has no tid; this format gives one to pair threads by.
    search = [a for d in pair.stripped.search_dirs
              for a in ("-O", f"settings append target.exec-search-paths {d}")]
    p = run([lldb(), "-b", *search, "-c", core, pair.stripped.exe, "-o",
             'settings set thread-stop-format "thread #${thread.index}: tid = ${thread.id}\\n"',
             "-o", "thread backtrace all"], timeout=timeout, check=False)
    threads, current = [], None
    for line in p.stdout.splitlines():
        m = _LLDB_THREAD.match(line)
        if m:
            current = Thread(int(m.group(1), 0), [], [])
            threads.append(current)
            continue
        m = _LLDB_FRAME.match(line)
        if m and current is not None:
            current.pcs.append(int(m.group(2), 16))
            current.names.append("")
    return threads
