"""Driving the release's LLDB (truth.tools.lldb) with the unwindkit plugin for the
test_lldb_*.py tests.

LLDB runs as a subprocess in batch mode (`lldb-N -b`), so a crash is observed and reported,
never fatal to the test. Expected values always come from LLDB itself on the intact twin."""
import atexit
import os
import re
import shutil
import subprocess
import tempfile

from truth.tools import Skip, lldb

CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:")
# The default thread line has no tid; this format gives one to pair threads by.
THREAD_FORMAT = 'settings set thread-stop-format "thread #${thread.index}: tid = ${thread.id}\\n"'
_THREAD = re.compile(r"^\*?\s*thread #\d+: tid = (0x[0-9a-fA-F]+|\d+)")
_FRAME = re.compile(r"^\s*\*?\s*frame #(\d+): (0x[0-9a-fA-F]+)")
_SELECTED = re.compile(r"^frame #(\d+): ")  # what `frame select N` prints first
_REGISTER = re.compile(r"^\s*(\w+) = (0x[0-9a-fA-F]+)")
# A command printing "SYMBOLS PATH": the symbol file LLDB took for the module `prog`.
SYMBOL_FILE = "script print('SYMBOLS', lldb.target.module['prog'].GetSymbolFileSpec().fullpath)"


class LldbCrashed(AssertionError):
    pass


def tagged(output, tag):
    """What follows TAG on the first line of `output` that starts with "TAG " (None if none)."""
    return next((line.split(" ", 1)[1] for line in output.splitlines()
                 if line.startswith(tag + " ")), None)


def plugin_path():
    path = os.path.join(os.environ.get("UNWINDKIT_BUILD_DIR", ""), "lldb-plugin",
                        "libunwindkit-lldb.so")
    if not os.path.exists(path):
        raise Skip(f"the LLDB plugin is not built ({path})")
    return path


class Lldb:
    """LLDB runs with or without the plugin; side files go to a private cache dir."""

    def __init__(self, plugin, cache_dir=None, timeout=600, setup=(), after_target=(), env=None):
        """`setup`: commands run after the plugin loads, before the target is made;
        `after_target`: the plugin's commands run once the target is made; `env`: variables
        set for LLDB."""
        self.lldb = lldb()
        self.plugin = plugin_path() if plugin else None
        self.setup = list(setup)
        self.after_target = list(after_target) if plugin else []
        if cache_dir is None:
            cache_dir = tempfile.mkdtemp(prefix="unwindkit-lldb-cache-")
            atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)
        self.cache_dir = cache_dir
        self.timeout = timeout
        self.env = dict(env or {})

    def run(self, commands, exe=None, core=None, check=True):
        """Runs `commands` after loading the plugin and the target; returns stdout."""
        cmd = [self.lldb, "-b", "-x"]
        pre = []
        if self.plugin:
            pre.append(f"plugin load {self.plugin}")
            pre += self.setup
        pre.append(THREAD_FORMAT)
        if exe:
            pre.append(f"target create {exe}" + (f" --core {core}" if core else ""))
        for c in pre + self.after_target + list(commands):
            cmd += ["-o", c]
        env = dict(os.environ, **self.env, UNWINDKIT_CACHE_DIR=self.cache_dir)
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=self.timeout, env=env)
        out = p.stdout + p.stderr
        if p.returncode < 0 or any(m in out for m in CRASH_MARKERS):
            raise LldbCrashed(f"lldb crashed (exit {p.returncode}) running {commands}:\n{out[-3000:]}")
        if check and p.returncode != 0:
            raise AssertionError(f"lldb exit {p.returncode} running {commands}:\n{out[-3000:]}")
        return p.stdout


def threads(output):
    """[[pc, ...] per thread] from `bt all` output (with THREAD_FORMAT), in LLDB's thread
    order; the twins' cores come from different processes, so threads pair by position."""
    result, current = [], None
    for line in output.splitlines():
        m = _THREAD.match(line)
        if m:
            current = []
            result.append(current)
            continue
        m = _FRAME.match(line)
        if m and current is not None:
            current.append(int(m.group(2), 16))
    return result


def selected_thread(output):
    """Position of the selected thread (`* thread #...`) in `bt all` output."""
    starts = [line for line in output.splitlines() if _THREAD.match(line)]
    return next((i for i, line in enumerate(starts) if line.startswith("*")), 0)


def registers(output):
    """{name: value} from `register read` output."""
    return {m.group(1): int(m.group(2), 16) for m in map(_REGISTER.match, output.splitlines())
            if m}


def frame_registers(lldb, exe, core, frames, pre=(), regs="rip rsp rbp"):
    """{frame: {reg: value}} after `frame select N` + `register read` for each of `frames`,
    once the commands `pre` (say, a launch to a breakpoint) have run."""
    cmds = list(pre)
    for n in frames:
        cmds += [f"frame select {n}", f"register read {regs}"]
    out = lldb.run(cmds, exe, core, check=False)  # a missing frame is an error: keep going
    result, current = {}, None
    for line in out.splitlines():
        m = _SELECTED.match(line)
        if m:
            current = result.setdefault(int(m.group(1)), {})
        elif current is not None:
            m = _REGISTER.match(line)
            if m:
                current[m.group(1)] = int(m.group(2), 16)
    return result
