"""One hostile run in GDB or LLDB: the plugin loaded, `bt` of every thread, then the dump and
check commands; the outcome classified as crash, hang or survived, with the frames of `bt`.
For a Mach-O file (no core: nothing here runs one) the run is the compact unwind commands only.

A crash is: the debugger killed by a signal, a crash banner of its own (GDB's "Fatal signal"
or internal error, LLVM's "PLEASE submit a bug report"/"Stack dump:"), a Python exception of
our GDB plugin leaking into the output, or the debugger stopping before the last command. A
hang is the time limit passing; the whole process group is killed then.
"""
import dataclasses
import os
import re
import signal
import subprocess

ALIVE = "@@ALIVE"
CRASH_MARKERS = ("Fatal signal", "PLEASE submit a bug report", "Stack dump:",
                 "A problem internal to GDB", "internal-error", "Traceback (most recent call",
                 "Python Exception", "Error occurred in Python")
THREAD_FORMAT = 'settings set thread-stop-format "thread #${thread.index}: tid = ${thread.id}\\n"'
_GDB_THREAD = re.compile(r"^Thread \d+ ")
_GDB_FRAME = re.compile(r"^#(\d+)\s+(0x[0-9a-f]+)")
_LLDB_THREAD = re.compile(r"^\*?\s*thread #\d+: tid = ")
_LLDB_FRAME = re.compile(r"^\s*\*?\s*frame #(\d+): (0x[0-9a-fA-F]+)")


@dataclasses.dataclass
class Outcome:
    crashed: str = ""  # why, when it crashed
    hung: bool = False
    threads: list = dataclasses.field(default_factory=list)  # [[pc, ...]] per thread
    output: str = ""
    seconds: float = 0.0


def _execute(cmd, timeout, env=None):
    """(returncode or None on timeout, combined output)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors="replace", env=env, start_new_session=True,
                         stdin=subprocess.DEVNULL)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out


def _classify(rc, out, threads):
    o = Outcome(output=out, threads=threads)
    if rc is None:
        o.hung = True
    elif rc < 0:
        o.crashed = f"killed by signal {-rc}"
    elif any(m in out for m in CRASH_MARKERS):
        o.crashed = next(m for m in CRASH_MARKERS if m in out)
    elif ALIVE not in out.replace(f"'{ALIVE}'", "").replace(f'"{ALIVE}"', ""):
        o.crashed = f"stopped before the last command (exit {rc})"
    return o


def _frames(text, thread_re, frame_re):
    threads, current = [], None
    for line in text.splitlines():
        if thread_re.match(line):
            current = []
            threads.append(current)
            continue
        m = frame_re.match(line)
        if m and current is not None and int(m.group(1)) == len(current):
            current.append(int(m.group(2), 16))
    return threads


def gdb(build_dir, exe, core, plugin, timeout, commands=True):
    cmd = ["gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set width 0",
           "-ex", "set confirm off"]
    if plugin:
        cmd += ["-ex", f"source {os.path.join(build_dir, 'gdb-plugin', 'unwindkit-gdb.py')}"]
    cmd += [exe, core, "-ex", "echo @@BT\\n",
            "-ex", "thread apply all bt -frame-info location-and-address", "-ex", "echo @@END\\n"]
    if plugin and commands:
        for c in ("unwindkit status", "unwindkit sframe dump", "unwindkit sframe check",
                  "unwindkit trace dump", "unwindkit bt"):
            cmd += ["-ex", c]
    cmd += ["-ex", f"echo {ALIVE}\\n"]
    # The plugin's side files go beside the core, not into the user's cache.
    cache = os.path.join(os.path.dirname(core), "gdb-cache")
    rc, out = _execute(cmd, timeout, env=dict(os.environ, UNWINDKIT_CACHE_DIR=cache))
    bt = out.split("@@BT\n", 1)[-1].split("@@END", 1)[0]
    return _classify(rc, out, _frames(bt, _GDB_THREAD, _GDB_FRAME))


def lldb(build_dir, exe, core, plugin, timeout, workdir, commands=True):
    lines = [THREAD_FORMAT, f"target create {exe} --core {core}",
             "script print('@@BT')", "bt all", "script print('@@END')"]
    if plugin and commands:
        lines += ["unwindkit status", "unwindkit sframe dump", "unwindkit sframe check",
                  "unwindkit trace dump", "unwindkit bt"]
    lines.append(f"script print('{ALIVE}')")
    script = os.path.join(workdir, f"lldb-{'plugin' if plugin else 'alone'}.cmds")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    cmd = ["lldb-22", "-b", "-x"]
    if plugin:
        cmd += ["-o", f"plugin load {os.path.join(build_dir, 'lldb-plugin', 'libunwindkit-lldb.so')}"]
    # -e false: a failing command (say `sframe check` on a bad table) must not end the batch.
    cmd += ["-o", f"command source -e false {script}"]
    cache = os.path.join(workdir, "lldb-cache")
    os.makedirs(cache, exist_ok=True)
    rc, out = _execute(cmd, timeout, env=dict(os.environ, UNWINDKIT_CACHE_DIR=cache))
    bt = out.split("\n@@BT\n", 1)[-1].split("\n@@END", 1)[0]
    return _classify(rc, out, _frames(bt, _LLDB_THREAD, _LLDB_FRAME))


def _macho_commands(path, pcs, prefix):
    """The compact unwind commands of a Mach-O run (the debuggers have dump and lookup; `check`
    is the CLI's, run for the validator's verdict); `path` is empty where the debugger's target
    is the file (LLDB)."""
    arg = f" {path}" if path else ""
    cmds = [f"{prefix}dump{arg}", f"{prefix}dump --decoded{arg}", f"{prefix}dump --json{arg}"]
    for pc in pcs:
        cmds += [f"{prefix}lookup {pc:#x}{arg}", f"{prefix}lookup --json {pc:#x}{arg}"]
    return cmds


def gdb_macho(build_dir, path, pcs, timeout):
    """GDB (Debian's loads no Mach-O objfile) with the commands taking the file's path."""
    cmd = ["gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set width 0",
           "-ex", f"source {os.path.join(build_dir, 'gdb-plugin', 'unwindkit-gdb.py')}"]
    for c in _macho_commands(path, pcs, "unwindkit compact-unwind "):
        cmd += ["-ex", c]
    cmd += ["-ex", f"echo {ALIVE}\\n"]
    rc, out = _execute(cmd, timeout)
    return _classify(rc, out, [])


def lldb_macho(build_dir, path, pcs, timeout, workdir):
    """LLDB with the Mach-O file as its target: LLDB's own Mach-O reader loads it, then the
    plugin's commands read the target's module."""
    lines = [f"target create {path}"] + _macho_commands("", pcs, "unwindkit compact-unwind ")
    lines.append(f"script print('{ALIVE}')")
    script = os.path.join(workdir, "lldb-macho.cmds")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    cmd = ["lldb-22", "-b", "-x", "-o",
           f"plugin load {os.path.join(build_dir, 'lldb-plugin', 'libunwindkit-lldb.so')}",
           "-o", f"command source -e false {script}"]
    rc, out = _execute(cmd, timeout)
    return _classify(rc, out, [])
