#!/usr/bin/env python3
"""The GDB route not taken, measured for scripts/bench (gdb-jit): GDB's JIT-reader unwinder
interface (bench/gdb_jit_reader.c) against GDB's own DWARF unwinder, on a scale case's
twins (bench/scale_cases.py).

Sides, each a fresh GDB, in alternating rounds (bench/debugger_pairs.py times them):
- native: GDB alone on the `.eh_frame` twin;
- plugin: GDB with the plugin on the SFrame twin, its side file kept (GDB's DWARF unwinder
  does every frame: the product);
- JIT: the same, plus the JIT reader, which GDB asks before any other unwinder: it does every
  frame its rows cover and leaves the rest (the entry point, libc) to the side file;
- JIT, every register: the reader also hands back every register that has a DWARF number.

Then what a person reads with the JIT reader, against GDB's DWARF unwinder on the same core:
the whole text of COMMAND, and the registers of frame 2 that GDB's DWARF unwinder shows as
"same value" when a CFI leaves them unspecified. A JIT frame cannot say "same value": what the
reader does not hand back is <not saved>.
Usage: gdb_jit_route.py PLUGIN CASE_DIR COMMAND RUNS   (COMMAND: `bt`, `thread apply all bt`)
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

from debugger_pairs import GDB_SCRIPT, one_run  # noqa: E402
from truth.cfi import fde_tables  # noqa: E402

# Frame 2's registers compared: general (caller- and callee-saved), flags, vector, segment
# base. `output $REG` prints each one's value or <not saved>.
PROBE = ["rax", "rcx", "rdi", "rbx", "rbp", "r12", "rsp", "rip", "eflags", "xmm0", "ymm0",
         "fs_base"]


def gdb(args, cache):
    env = dict(os.environ, UNWINDKIT_CACHE_DIR=cache)
    out = subprocess.run(["gdb", "-batch", "-nx", *args], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    return out.stdout


# `readelf -wF` column names on x86-64, by DWARF number (ra: the return-address column).
DWARF = {name: number for number, name in enumerate(
    "rax rdx rcx rbx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 ra".split())}


def rows_file(side_file, prog, core, path):
    """The side file's CFI rows (readelf's frames-interp text, truth/cfi.py) at the core's
    run-time addresses, as the reader reads them; rows whose return address is undefined
    (the entry point) and rows that are not rsp/rbp + offset are left out, so GDB does those
    frames."""
    files = gdb([prog, core, "-ex", "info files"], os.devnull)
    runtime = re.search(r"0x([0-9a-f]+) - 0x[0-9a-f]+ is \.text\n", files)
    header = subprocess.run(["readelf", "-SW", prog], capture_output=True, text=True,
                            check=True).stdout
    in_file = re.search(r"\.text\s+PROGBITS\s+([0-9a-f]+)", header)
    if runtime is None or in_file is None:
        raise SystemExit(f"bench gdb-jit: no .text address for {prog}")
    bias = int(runtime.group(1), 16) - int(in_file.group(1), 16)
    text = subprocess.run(["readelf", "--debug-dump=frames-interp", side_file],
                          capture_output=True, text=True, check=True).stdout
    lines = []
    for _, fde_end, table in fde_tables(text):
        for i, (start, cells) in enumerate(table):
            end = table[i + 1][0] if i + 1 < len(table) else fde_end
            found = re.fullmatch(r"(rsp|rbp)\+(\d+)", cells["CFA"])
            if found and cells.get("ra", "u") != "u":
                rules = " ".join(f"{DWARF[reg]}:{rule}" for reg, rule in cells.items()
                                 if reg != "CFA")
                lines.append(f"{start + bias:x} {end + bias:x} "
                             f"{DWARF[found.group(1)]} {found.group(2)} {rules}\n")
    with open(path, "w") as f:
        f.writelines(lines)
    return len(lines)


def main():
    plugin, case_dir, command, runs = sys.argv[1:5]
    runs = int(runs)
    work = tempfile.mkdtemp(prefix="uk-bench-jit.")
    reader = os.path.join(HERE, "gdb_jit_reader.c")
    readers = {}
    for name, defines in (("jit", []), ("jit-all", ["-DPASS_EVERY_REGISTER"])):
        readers[name] = os.path.join(work, f"{name}.so")
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", *defines, reader, "-o",
                        readers[name]], check=True)
    exe = {side: os.path.join(case_dir, side, "prog") for side in ("ehfram", "stripd")}
    core = {side: os.path.join(case_dir, side, "core.prog") for side in ("ehfram", "stripd")}
    timer = os.path.join(work, "timer.py")
    with open(timer, "w") as f:
        f.write(GDB_SCRIPT.format(command=command))
    pin = os.environ.get("UNWINDKIT_BENCH_CPUS")
    taskset = ["taskset", "-c", pin] if pin else []

    source = ["-iex", f"source {plugin}"]
    sides = {
        "native": [exe["ehfram"], core["ehfram"]],
        "plugin": [*source, exe["stripd"], core["stripd"]],
        "plugin + JIT reader": [*source, exe["stripd"], core["stripd"],
                                "-ex", f"jit-reader-load {readers['jit']}"],
        "plugin + JIT, every register": [*source, exe["stripd"], core["stripd"],
                                         "-ex", f"jit-reader-load {readers['jit-all']}"],
    }
    kept = os.path.join(work, "kept")
    gdb(sides["plugin"] + ["-ex", "bt 1"], kept)  # the side file, kept for every run below
    side_file = [os.path.join(kept, n) for n in os.listdir(kept) if n.endswith(".gdb.debug")]
    if len(side_file) != 1:
        raise SystemExit(f"bench gdb-jit: expected one side file in {kept}: {side_file}")
    rows = os.path.join(work, "rows")
    count = rows_file(side_file[0], exe["stripd"], core["stripd"], rows)
    os.environ["UNWINDKIT_BENCH_JIT_ROWS"] = rows
    times = {name: [] for name in sides}
    for _ in range(runs):
        for name, args in sides.items():
            cmd = [*taskset, "gdb", "-batch", "-nx", *args, "-x", timer]
            times[name].append(one_run(cmd, kept))

    probe = ["-ex", "set pagination off", "-ex", "set backtrace limit unlimited", "-ex", command,
             "-ex", "echo PROBE\\n", "-ex", "frame 2"]
    probe += [a for r in PROBE for a in ("-ex", f"output ${r}", "-ex", "echo \\n")]
    seen = {}
    for name, args in sides.items():
        text = gdb(args + probe, kept)
        bt, _, regs = text.partition("PROBE\n")
        bt = [line for line in bt.splitlines() if line.startswith("#")]
        values = regs.splitlines()[1:]  # after frame 2's own line
        seen[name] = (bt, values)

    print(f"GDB's JIT-reader interface vs GDB's DWARF unwinder   `{command}`, "
          f"{len(seen['native'][0])} frames, median of {runs} alternating rounds; "
          f"the reader covers {count} rows of the side file's CFI")
    print(f"  {'':44}to first (s)  first (s)  warm (s)  cpu (s)")
    med = {name: [statistics.median(r[k] for r in rows) for k in range(6)]
           for name, rows in times.items()}
    for name, (to_first, first, warm, _, _, cpu) in med.items():
        print(f"  {name:44}{to_first:10.3f}  {first:9.3f}  {warm:8.3f}  {cpu:7.3f}")
    n = med["native"]
    for name, o in list(med.items())[1:]:
        print(f"  ratio {name + ' / native':38}{o[0] / n[0]:10.2f}  {o[1] / n[1]:9.2f}  "
              f"{o[2] / n[2]:8.2f}  {o[5] / n[5]:7.2f}")
    # Against GDB's DWARF unwinder on the same core (the plugin): the twins' cores are runs of
    # their own, whose threads' stacks may differ. The plugin against native says whether
    # they do here.
    print(f"  what a person reads (the `{command}` text; frame 2: {', '.join(PROBE)}):")
    for name, reference in (("plugin", "native"), ("plugin + JIT reader", "plugin"),
                            ("plugin + JIT, every register", "plugin")):
        (bt, values), (ref_bt, ref_values) = seen[name], seen[reference]
        same_bt = sum(1 for a, b in zip(bt, ref_bt) if a == b)
        differ = [PROBE[i] for i, (a, b) in enumerate(zip(values, ref_values)) if a != b]
        differ += PROBE[min(len(values), len(ref_values)):]
        print(f"    {name + ' against ' + reference:44} bt: {same_bt} of {len(ref_bt)} lines "
              f"the same ({len(bt)} printed); registers that differ: {', '.join(differ) or 'none'}")
    subprocess.run(["rm", "-rf", work], check=False)


if __name__ == "__main__":
    main()
