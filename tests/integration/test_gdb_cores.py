#!/usr/bin/env python3
"""GDB plugin on cores: with unwindkit-gdb.py sourced, GDB on the stripped twin's core must
give what GDB alone gives on the intact twin's core (the truth):
- every frame's PC in every thread (`thread apply all bt`, read through GDB's frame API),
  for every program in tests/programs/ and the shared fixtures (x86_64 with a shared library
  found through solib-search-path), and every AArch64 program (static, crashed under
  qemu-aarch64) and fixture read through gdb-multiarch;
- `frame N` + `info registers` of the PC, SP and FP in every frame of the crashing thread;
- `info unwinder` lists "unwindkit"; `disable unwinder global unwindkit` gives back GDB's
  own output on the stripped core, word for word; `enable` gives ours again.
The other test_gdb_*.py files import the helpers below."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from truth.debuggers import HERE as TRUTH_DIR  # noqa: E402
from truth.tools import side_file_cache  # noqa: E402

REGISTERS = {"x86_64": ("rip", "rsp", "rbp"), "aarch64": ("pc", "sp", "x29")}


def plugin_path():
    path = os.path.join(os.environ["UNWINDKIT_BUILD_DIR"], "gdb-plugin", "unwindkit-gdb.py")
    if not os.path.isfile(path):
        raise RuntimeError(f"the GDB plugin is not built: {path} is missing")
    return path


# The plugin's side files (gdb-plugin/README.md) go here, not into the user's cache; removed
# when the test ends.
_SIDE_FILES = side_file_cache("uk-gdb-side-files-")


def python_unwinder_only():
    """`early` commands for run_gdb(..., plugin=False): the plugin sourced before the files
    load, attaching no side files, so its Python unwinder does every frame it covers."""
    return (f"source {plugin_path()}", "unwindkit set side-files off")


def run_gdb(gdb, exe, core=None, commands=(), plugin=True, before=(), script=None, timeout=600,
            early=()):
    """GDB's stdout for `commands` on exe (+ core), with the plugin sourced first if asked;
    `early` commands run before the files load."""
    cmd = [gdb, "-batch", "-nx", "-ex", "set pagination off", "-ex", "set width 0"]
    for c in early:
        cmd += ["-iex", c]
    if plugin:
        cmd += ["-ex", f"source {plugin_path()}"]
    for c in before:
        cmd += ["-ex", c]
    cmd.append(exe)
    if core:
        cmd.append(core)
    if script:
        cmd += ["-x", script]
    for c in commands:
        cmd += ["-ex", c]
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                       env=dict(os.environ, UNWINDKIT_CACHE_DIR=_SIDE_FILES.name))
    if "Traceback" in p.stderr or "Python Exception" in p.stderr:
        raise RuntimeError(f"Python error inside GDB: {' '.join(cmd)}\n{p.stderr}")
    return p.stdout


def frames(gdb, exe, core, plugin, before=()):
    """{thread rank: [pc, ...]} through GDB's frames (the truth harness's gdb_frames.py)."""
    out = run_gdb(gdb, exe, core, plugin=plugin, before=before,
                  script=os.path.join(TRUTH_DIR, "gdb_frames.py"))
    threads = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "FRAME":
            threads.setdefault(int(parts[1]), []).append(int(parts[3], 16))
    # Twins are separate processes: thread ids differ, their order does not.
    return [threads[tid] for tid in sorted(threads)]


def frame_differences(expected, got):
    """Each truth frame whose PC differs (or is missing) in `got`, as text."""
    problems = []
    if len(expected) != len(got):
        return [f"{len(expected)} threads expected, {len(got)} found"]
    for rank, (want, have) in enumerate(zip(expected, got)):
        for level, pc in enumerate(want):
            if level >= len(have) or have[level] != pc:
                found = f"{have[level]:#x}" if level < len(have) else "nothing"
                problems.append(f"thread {rank} frame #{level}: want {pc:#x}, got {found}")
                break
    return problems


_REG_LINE = re.compile(r"^(\w+)\s+(0x[0-9a-f]+)")


def register_levels(frame_count):
    """The frames whose registers are compared: all of them, or for a deep stack its first
    64 and last 8 (a 10,000-frame recursion repeats one frame shape)."""
    if frame_count <= 72:
        return list(range(frame_count))
    return list(range(64)) + list(range(frame_count - 8, frame_count))


def registers(gdb, exe, core, arch, levels, plugin, before=()):
    """[{register: value}] for `frame N` + `info registers PC SP FP`, N in `levels`."""
    names = REGISTERS[arch]
    commands = ["set backtrace past-main on", "set backtrace limit unlimited"]
    for n in levels:
        commands += [f"echo @@{n}\\n", f"frame {n}", f"info registers {' '.join(names)}"]
    out = run_gdb(gdb, exe, core, commands, plugin=plugin, before=before)
    result, current = [], None
    for line in out.splitlines():
        if line.startswith("@@"):
            current = {}
            result.append(current)
            continue
        m = _REG_LINE.match(line)
        if m and current is not None and m.group(1) in names:
            current[m.group(1)] = int(m.group(2), 16)
    return result


def bt_text(out, marker):
    """The `bt` lines printed after `echo MARKER` (up to the next marker)."""
    lines = out.split(f"{marker}\n", 1)[1].split("@@", 1)[0].splitlines()
    return [l for l in lines if l.startswith("#") or l.startswith("Backtrace")]


def check_pair(gdb, arch, pair, intact_core, stripped_core, before_intact, before_stripped,
               stripped_has_cfi=False):
    """Every check of this file on one twin pair; returns problems as text."""
    problems = []
    expected = frames(gdb, pair.intact.exe, intact_core, False, before_intact)
    levels = register_levels(len(expected[0]) if expected else 0)
    want = registers(gdb, pair.intact.exe, intact_core, arch, levels, False, before_intact)
    got = registers(gdb, pair.stripped.exe, stripped_core, arch, levels, True, before_stripped)
    # Frame #0 needs no unwinding: if its registers differ, the twins did not crash in the
    # same state (a C++ program without .eh_frame cannot throw) and there is no truth.
    if want[:1] != got[:1]:
        raise truth.Skip(f"the twins' cores differ at frame #0: {want[:1]} vs {got[:1]}")

    ours = frames(gdb, pair.stripped.exe, stripped_core, True, before_stripped)
    problems += frame_differences(expected, ours)
    if len(want) != len(levels) or len(got) != len(levels):
        problems.append(f"registers of {len(levels)} frames expected, read {len(want)} / "
                        f"{len(got)}")
    for level, w, g in zip(levels, want, got):
        if w != g or len(w) != len(REGISTERS[arch]):
            hexed = lambda regs: {k: hex(v) for k, v in regs.items()}  # noqa: E731
            problems.append(f"frame {level} registers: want {hexed(w)}, got {hexed(g)}")
            break

    alone = run_gdb(gdb, pair.stripped.exe, stripped_core, ["echo @@A\\n", "bt"],
                    plugin=False, before=before_stripped)
    # The Python unwinder alone (no side file for GDB's DWARF unwinder): disabling it must
    # give GDB alone back.
    toggled = run_gdb(gdb, pair.stripped.exe, stripped_core,
                      ["echo @@I\\n", "info unwinder", "echo @@N\\n", "bt",
                       "disable unwinder global unwindkit", "echo @@D\\n", "bt",
                       "enable unwinder global unwindkit", "echo @@E\\n", "bt"],
                      plugin=False, before=before_stripped, early=python_unwinder_only())
    listing = toggled.split("@@I\n", 1)[1].split("@@N", 1)[0]
    if not re.search(r"^\s+unwindkit\s*$", listing, re.MULTILINE):
        problems.append(f"info unwinder does not list unwindkit:\n{listing}")
    if bt_text(toggled, "@@D") != bt_text(alone, "@@A"):
        problems.append("with unwindkit disabled, bt differs from GDB alone")
    if bt_text(toggled, "@@E") != bt_text(toggled, "@@N"):
        problems.append("after enable unwinder, bt is not the plugin's again")
    # A stripped copy that keeps .eh_frame (cxx_terminate, so that it can throw) leaves GDB
    # its own CFI everywhere: the plugin must then claim nothing, and bt is GDB's own.
    if not stripped_has_cfi and bt_text(toggled, "@@N") == bt_text(alone, "@@A"):
        problems.append("the plugin changed nothing: this pair does not exercise it")
    return problems


def main():
    truth.tools.need("gdb")  # skips the test where there is no GDB
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    only = sys.argv[1:]
    failed, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="uk-gdb-cores-") as work:
        jobs = []
        # x86_64 programs run natively; AArch64 ones are static and run under qemu-aarch64,
        # read with gdb-multiarch (truth.AARCH64). A case skips only where truth/cases.py
        # says it has no truth or build_pair cannot build it (both print why).
        for arch in (truth.X86_64, truth.AARCH64):
            for case in truth.cases_for(arch.name):
                reason = dict(case.no_truth).get(arch.name)
                if reason:
                    print(f"SKIP {arch.name} {case.name}: {reason}")
                elif not only or case.name in only:
                    jobs.append((arch, case, None))
        if not only:
            shared = os.environ["UNWINDKIT_SHARED_DIR"]
            jobs.append((truth.X86_64, None, truth.fixture_pair(shared, truth.X86_64)))
            jobs.append((truth.AARCH64, None, truth.fixture_pair(shared, truth.AARCH64)))
        for arch, case, pair in jobs:
            name = f"{arch.name} {case.name}" if case else pair.name
            try:
                if pair is None:
                    pair = truth.build_pair(case, arch, work, src)
                    intact_core = truth.make_core(pair.intact, pair.arch)
                    stripped_core = truth.make_core(pair.stripped, pair.arch)
                else:
                    intact_core = os.path.join(pair.intact.dir, "core.prog")
                    stripped_core = os.path.join(pair.stripped.dir, "core.prog")
                tool = truth.tools.need(pair.arch.gdb)
                # The fixture cores name libfix.so by the folder they were made in.
                before_i = [f"set solib-search-path {pair.intact.dir}"]
                before_s = [f"set solib-search-path {pair.stripped.dir}"]
                problems = check_pair(tool, arch.name, pair, intact_core, stripped_core,
                                      before_i, before_s,
                                      stripped_has_cfi=bool(case and case.keep_eh_frame))
            except truth.Skip as skip:
                print(f"SKIP {name}: {skip}")
                continue
            ran += 1
            if problems:
                failed.append(name)
                print(f"FAIL {name}:\n  " + "\n  ".join(problems))
            else:
                print(f"ok   {name}")
    print(f"{ran - len(failed)}/{ran} programs agree with GDB on the intact twin")
    return 1 if failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
