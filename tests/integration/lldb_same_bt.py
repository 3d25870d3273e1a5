"""What the LLDB "same bt" tests share: the oracle copy of a stripped build (symbols stripped,
`.eh_frame` kept, same build-id and layout), LLDB's `bt all` text with and without the plugin
on one core, and the per-thread frame counts the tests report.

The oracle is LLDB alone with the `.eh_frame` copy as the executable on the stripped copy's
core: LLDB pairs files with a core by build-id, and `strip --strip-all` of the intact build
keeps both the build-id and the loaded layout. On AArch64 the stripped twin is relinked from
objects without `.eh_frame` (truth/build.py), which moves only `.eh_frame` and `.sframe` inside
the read-only segment: code and data keep their addresses, so the intact build's copy still
runs on the stripped core."""
import os
import re
import subprocess

from lldb_plugin import CRASH_MARKERS, plugin_path
from truth.tools import lldb, side_file_cache

# Where the oracle copy lives, beside the pair's "intact" and "stripd" folders.
_FRAME = re.compile(r"^\s*\*?\s*frame #(\d+): (0x[0-9a-fA-F]+) (.*)$")
_THREAD = re.compile(r"^\*?\s*thread #\d+")


def bt_all(exe, core, plugin, object_map=(), timeout=600, plugin_after_target=False, setup=(),
           after_target=(), env=None):
    """LLDB's `bt all` text on `core`, or on a live run of `exe` to its crash when `core` is
    None: with the plugin loaded before the target is created (or after), then the plugin's
    `setup` commands, its `after_target` commands once the target is made, and
    `target.object-map` pairs (path prefix, replacement) for shared libraries that must come
    from elsewhere; `env`: variables set for LLDB."""
    pre = [f"settings set target.object-map {a} {b}" for a, b in object_map]
    create = f"target create {exe}" + (f" --core {core}" if core else "")
    load = [f"plugin load {plugin_path()}", *setup] if plugin else []
    commands = pre + (([create] + load) if plugin_after_target else (load + [create]))
    commands += list(after_target) if plugin else []
    after = ["script print('@@bt')", "bt all"]
    cmd = [lldb(), "-b", "-x"]
    for c in commands + (after if core else ["process launch"]):
        cmd += ["-o", c]
    for c in ([] if core else after):  # batch mode runs these once the process has crashed
        cmd += ["-k", c]
    with side_file_cache("unwindkit-lldb-cache-") as cache:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=timeout,
                           env=dict(os.environ, **(env or {}), UNWINDKIT_CACHE_DIR=cache))
    if p.returncode < 0 or any(m in p.stdout + p.stderr for m in CRASH_MARKERS) or \
            "@@bt\n" not in p.stdout:
        raise AssertionError(f"lldb exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    text = p.stdout.split("@@bt\n", 1)[-1]
    return [line for line in text.splitlines() if not line.startswith("(lldb) ")]


def thread_frames(lines):
    """[[(pc, description), ...] per thread] from `bt all` lines."""
    threads = []
    for line in lines:
        if _THREAD.match(line):
            threads.append([])
            continue
        m = _FRAME.match(line)
        if m and threads:
            threads[-1].append((int(m.group(2), 16), m.group(3)))
    return threads


def same_frame0_threads(want, got):
    """Two live runs' `bt all` lines with only the threads (paired by position) whose frame #0
    line is the same in both: a live program's other threads may be anywhere. Also returns
    how many threads were left out."""
    def blocks(lines):
        out = [[]]
        for line in lines:
            if _THREAD.match(line):
                out.append([])
            out[-1].append(line)
        return out[0], out[1:]

    (want_head, want_blocks), (got_head, got_blocks) = blocks(want), blocks(got)
    kept = [(w, g) for w, g in zip(want_blocks, got_blocks) if w[1:2] == g[1:2]]
    left_out = max(len(want_blocks), len(got_blocks)) - len(kept)
    return (want_head + [line for w, _ in kept for line in w],
            got_head + [line for _, g in kept for line in g], left_out)


def past_end(want, got):
    """Frames a thread has beyond the oracle's last one, summed over threads paired by
    position (a core lists its threads in one order)."""
    return sum(max(0, len(g) - len(w)) for w, g in zip(want, got))


def normalize(lines, paths):
    """Lines with each of `paths` (the executables) replaced by one placeholder."""
    out = []
    for line in lines:
        for path in sorted(paths, key=len, reverse=True):
            line = line.replace(path, "<exe>")
        out.append(line)
    return out


# An argument in a frame line: `name=value` up to the next `, ` or the list's `)`.
_ARGUMENT = re.compile(r"(\w+)=((?:\([^()]*\))|[^,()]*)")


def unavailable_only(want, got):
    """Whether frame line `got` is `want` but for argument values shown `<unavailable>`: what a
    side file with callee-saved registers unavailable (the quick file) may honestly show."""
    if _ARGUMENT.sub("", want) != _ARGUMENT.sub("", got):
        return False
    pairs = list(zip(_ARGUMENT.findall(want), _ARGUMENT.findall(got)))
    return len(pairs) == len(_ARGUMENT.findall(want)) == len(_ARGUMENT.findall(got)) and all(
        w[0] == g[0] and (w[1] == g[1] or g[1] == "<unavailable>") for w, g in pairs)


def first_difference(want, got, unavailable_allowed=False):
    """A short text naming the first line that differs, or "" (with `unavailable_allowed`,
    argument values shown unavailable are no difference: unavailable_only)."""
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g and not (unavailable_allowed and unavailable_only(w, g)):
            return f"line {i + 1}:\n       want {w}\n       got  {g}"
    if len(want) != len(got):
        return f"{len(want)} lines wanted, {len(got)} got"
    return ""
