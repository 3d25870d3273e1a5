#!/usr/bin/env python3
"""The core owns every report: the CLI, the GDB plugin and the LLDB plugin print the same text
for the same input. One program (tests/integration/programs/trace_*.c, `-g -O0 -no-pie`, with
`.sframe` from `as --gsframe` and `.trace` from `unwindkit trace build`) crashes to a core; a
non-PIE program's run-time addresses are its link-time ones, so the CLI (on the file) and the
debuggers (on the core) look up the same numbers. For each function `nm -S` lists:
- `sframe lookup` of its first and last byte must be the same text in all three, and name the
  range `nm -S` gives (binutils, not us);
- `trace lookup` of its first byte must be the same text in all three, and give the file:line
  binutils' `addr2line` gives;
`_start` (crt1.o: no SFrame, no DWARF) must have no row of either, the same text in all three;
and `sframe check`, `sframe dump` (readelf --sframe's text) and `trace dump` of the program
must be the same text in all three. So must the three of libc, which has neither table
(readelf's section list): the CLI fails with the debuggers' text as its error."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from truth.tools import Skip, need, run  # noqa: E402
from lldb_plugin import Lldb  # noqa: E402
from test_gdb_cores import run_gdb  # noqa: E402
from test_lldb_commands import marked, pieces  # noqa: E402

HANDLE = ("script r = lldb.SBCommandReturnObject(); "
          "_ = lldb.debugger.GetCommandInterpreter().HandleCommand('{}', r); "
          "print(r.GetOutput(), end='')")
SOURCES = ["trace_main.c", "trace_visit.c"]
OWN = ("main", "walk_list", "visit", "poke")  # the sources' functions
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"  # as the program's core names it
FLAGS = ["-g", "-O0", "-fno-omit-frame-pointer", "-no-pie", "-Wa,--gsframe"]


def build(work):
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "integration", "programs")
    prog_dir = os.path.join(work, "prog.d")
    os.makedirs(prog_dir)
    g = os.path.join(work, "prog.g")
    run([need("gcc"), *FLAGS, "-o", g, *[os.path.join(src, s) for s in SOURCES]], cwd=work)
    exe = os.path.join(prog_dir, "prog")
    run([os.environ["UNWINDKIT"], "trace", "build", g, "-o", exe])
    return truth.Build(prog_dir, exe, [])


def functions(exe):
    """{name: (start, end)} of the program's sized text symbols, per `nm -S`."""
    out = {}
    for line in run([need("nm"), "-S", exe]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and int(parts[1], 16) > 1:
            out[parts[3]] = (int(parts[0], 16), int(parts[0], 16) + int(parts[1], 16))
    return out


def cli(*args):
    return run([os.environ["UNWINDKIT"], *args], check=False).stdout


def cli_error(*args):
    """The CLI's error for a file it cannot report on, without its "unwindkit: " prefix."""
    done = run([os.environ["UNWINDKIT"], *args], check=False)
    prefix = "unwindkit: "
    if done.returncode == 0 or done.stdout or not done.stderr.startswith(prefix):
        return f"(exit {done.returncode}, stdout {done.stdout!r}, stderr {done.stderr!r})"
    return done.stderr[len(prefix):]


def gdb_pieces(exe, core, commands):
    """What each GDB command printed, in order."""
    script = []
    for i, c in enumerate(commands):
        script += [f"echo @@{i}\\n", c]
    script.append(f"echo @@{len(commands)}\\n")
    out = run_gdb(need("gdb"), exe, core, script)
    return [out.split(f"@@{i}\n", 1)[1].split(f"@@{i + 1}\n", 1)[0]
            for i in range(len(commands))]


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-same-") as work:
        try:
            prog = build(work)
            core = truth.make_core(prog, truth.X86_64)
        except Skip as e:
            print(f"SKIP {e}")
            return 0
        exe = prog.exe
        funcs = {n: r for n, r in functions(exe).items() if n in OWN}
        if len(funcs) != len(OWN):
            problems.append(f"nm -S lists {sorted(funcs)}, want {sorted(OWN)}")
        # _start (crt1.o: no SFrame, no DWARF) has neither an SFrame row nor a .trace row.
        start_pc = functions(exe).get("_start", (None,))[0] or \
            int(re.search(r"Entry point address:\s+(0x[0-9a-f]+)",
                          run([need("readelf"), "-h", exe]).stdout).group(1), 16)
        sframe_pcs = sorted([pc for start, end in funcs.values() for pc in (start, end - 1)] +
                            [start_pc])
        trace_pcs = sorted([start for start, _ in funcs.values()] + [start_pc])

        # name: (CLI text, GDB command, LLDB command)
        cases = {}
        for pc in sframe_pcs:
            cases[f"sframe lookup {pc:#x}"] = (cli("sframe", "lookup", exe, hex(pc)),
                                               f"unwindkit sframe lookup {pc:#x}",
                                               f"unwindkit sframe lookup {pc:#x}")
        for pc in trace_pcs:
            cases[f"trace lookup {pc:#x}"] = (cli("trace", "lookup", exe, hex(pc)),
                                              f"unwindkit trace lookup {pc:#x}",
                                              f"unwindkit trace lookup {pc:#x}")
        cases["sframe check"] = (cli("sframe", "check", exe), "unwindkit sframe check",
                                 "unwindkit sframe check -m prog")
        cases["sframe dump"] = (cli("sframe", "dump", exe), "unwindkit sframe dump",
                                "unwindkit sframe dump -m prog")
        cases["trace dump"] = (cli("trace", "dump", exe), "unwindkit trace dump",
                               "unwindkit trace dump -m prog")
        # A loaded file with neither table, named by the path the core gives it.
        for command in ("sframe check", "sframe dump", "trace dump"):
            cases[f"{command}, libc"] = (cli_error(*command.split(), LIBC),
                                         f"unwindkit {command} {LIBC}",
                                         f"unwindkit {command} -m {LIBC}")
        names = list(cases)
        gdb_out = gdb_pieces(exe, core, [cases[n][1] for n in names])
        # Through the SB API: `lldb -b` stops at a failed command (a lookup that finds nothing).
        lldb_cmds = [HANDLE.format(cases[n][2]) for n in names]
        lldb_out = pieces(Lldb(plugin=True).run(marked(lldb_cmds), exe, core, check=False),
                          len(lldb_cmds))
        readelf = run([need("readelf"), "--sframe", exe]).stdout
        libc_sections = run([need("readelf"), "-SW", LIBC]).stdout
        addr2line = {pc: run([need("addr2line"), "-e", exe, hex(pc)]).stdout.strip()
                     for pc in trace_pcs}

    for name, gdb_text, lldb_text in zip(names, gdb_out, lldb_out):
        cli_text = cases[name][0]
        print(f"{name}: {cli_text.splitlines()[0] if cli_text else '(nothing)'}")
        if not cli_text:
            problems.append(f"{name}: the CLI printed nothing")
        if gdb_text != cli_text:
            problems.append(f"{name}: GDB differs from the CLI:\n{gdb_text}---\n{cli_text}")
        if lldb_text != cli_text:
            problems.append(f"{name}: LLDB differs from the CLI:\n{lldb_text}---\n{cli_text}")

    # The common text is right, by tools no one here wrote.
    for name, (start, end) in funcs.items():
        for pc in (start, end - 1):
            text = cases[f"sframe lookup {pc:#x}"][0]
            if f"function [{start:#x}, {end:#x})" not in text:
                problems.append(f"sframe lookup {pc:#x} does not give {name}'s nm range "
                                f"[{start:#x}, {end:#x}): {text}")
        m = re.match(r"^.*/([^/]+):(\d+)", addr2line[start])
        text = cases[f"trace lookup {start:#x}"][0]
        if not m or f" {m.group(1)}:{m.group(2)} " not in text:
            problems.append(f"trace lookup {start:#x} is not addr2line's {addr2line[start]}: "
                            f"{text}")
    expected_dump = readelf[readelf.index("Contents of the SFrame section"):]
    if cases["sframe dump"][0].strip() != expected_dump.strip():
        problems.append("the CLI's sframe dump is not readelf --sframe's text")
    if "no SFrame row" not in cases[f"sframe lookup {start_pc:#x}"][0] or \
            "??" not in cases[f"trace lookup {start_pc:#x}"][0]:
        problems.append(f"_start at {start_pc:#x} has a row: "
                        f"{cases[f'sframe lookup {start_pc:#x}'][0]}"
                        f"{cases[f'trace lookup {start_pc:#x}'][0]}")
    if not re.search(rf"^{re.escape(exe)}: \.sframe OK$", cases["sframe check"][0], re.M):
        problems.append(f"sframe check does not pass the program: {cases['sframe check'][0]}")

    for section, command in ((".sframe", "sframe check"), (".sframe", "sframe dump"),
                             (".trace", "trace dump")):
        if f" {section} " in libc_sections:
            problems.append(f"{LIBC} has a {section} section: no longer a file without one")
        if cases[f"{command}, libc"][0] != f"{LIBC}: no {section} section\n":
            problems.append(f"{command} of {LIBC}: {cases[f'{command}, libc'][0]}")

    for p in problems:
        print("FAIL", p)
    print(f"{len(problems)} problems" if problems else
          f"the three front ends agree on {len(names)} reports")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
