"""Crashing a built program to a core file.

The program runs with `ulimit -c unlimited`, an empty environment (`env -i`) and ASLR off
(`setarch -R`), from its own folder as `./prog`, so the intact and stripped twins load at the
same addresses. Linux writes `core` or `core.PID` in the working directory when
/proc/sys/kernel/core_pattern is `core` (a piped pattern takes the core elsewhere: Skip);
qemu-user writes `qemu_prog_<time>_<pid>.core` there itself.
"""
import glob
import os
import shlex

from .tools import Skip, need, run


class CoreUnavailable(Skip):
    pass


def _core_pattern():
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            return f.read().strip()
    except OSError:
        return "core"


def _core_files(d):
    return set(glob.glob(os.path.join(d, "core")) + glob.glob(os.path.join(d, "core.*")) +
               glob.glob(os.path.join(d, "qemu_*.core")))


def make_core(build, arch, timeout=120):
    """Runs build.exe until it crashes; returns the path of its core file."""
    if not arch.runner:
        pattern = _core_pattern()
        if pattern.startswith("|") or "/" in pattern:
            raise CoreUnavailable(f"core_pattern {pattern!r} does not write cores in the cwd")
    for old in _core_files(build.dir):
        os.remove(old)
    runner = [need(arch.runner[0]), *arch.runner[1:]] if arch.runner else []
    cmd = " ".join(shlex.quote(c) for c in
                   ["env", "-i", need("setarch"), "-R", *runner, "./prog"])
    p = run(["bash", "-c", f"ulimit -c unlimited; cd {shlex.quote(build.dir)} && exec {cmd}"],
            timeout=timeout, check=False)
    found = sorted(_core_files(build.dir), key=os.path.getmtime)
    if arch.runner:
        # qemu re-raises the guest's signal after writing the guest core, so the kernel may
        # also dump qemu itself as `core`: only the guest's core is wanted.
        found = [f for f in found if os.path.basename(f).startswith("qemu_")]
    if not found:
        raise CoreUnavailable(
            f"{build.exe} exited {p.returncode} without a core in {build.dir}: {p.stderr[-300:]}")
    core = os.path.join(build.dir, "core.prog")
    os.replace(found[-1], core)
    return core
