#!/usr/bin/env python3
"""The plugin's `unwindkit` commands inside LLDB, on the core of the stripped twin of
tests/programs/omit_fp.c (x86_64, truth/build.py), against things no one here wrote:
- `unwindkit sframe dump -m prog` prints what `readelf --sframe` prints for that file (one
  module: no line naming it); `unw sf d -m prog` prints the same;
- `unwindkit sframe dump --json` (every module) parses as an array of dump documents, the
  program's with one function per FDE `readelf` counts;
- `unwindkit sframe lookup PC` (frame #0's PC) names the function range `nm -S` of the intact
  twin gives, moved by the load bias LLDB alone reports (`image lookup -a`) on the intact core;
- `unwindkit sframe check -m prog` passes the intact table, and on a copy with a damaged
  version byte fails naming `.sframe+0x2` (the offset located with `readelf -S`);
- `unwindkit bt` gives the PCs of LLDB's own `bt` (plugin loaded), frame for frame;
- `unwindkit regs N` gives the rip/rsp of `frame select N` + `register read`;
- `help unwindkit` lists the subcommands."""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from lldb_plugin import Lldb, frame_registers, registers, threads  # noqa: E402
from test_lldb_bad_tables import section  # noqa: E402
from truth.tools import need, run  # noqa: E402

# Runs a command through the SB API and prints its output and whether it succeeded.
SUCCEEDED = ("script r = lldb.SBCommandReturnObject(); "
             "lldb.debugger.GetCommandInterpreter().HandleCommand('{}', r); "
             "print(r.GetOutput() + r.GetError() + 'SUCCEEDED ' + str(r.Succeeded()))")
SUBCOMMANDS = ("status", "sframe", "bt", "regs", "disable", "enable")


def marked(commands):
    """The commands, each preceded by a marker line `@@<i>`."""
    out = []
    for i, c in enumerate(commands):
        out += [f"script print('@@{i}')", c]
    return out + [f"script print('@@{len(commands)}')"]


def pieces(output, count):
    """The text each marked command printed (the echoed `(lldb) ...` lines dropped)."""
    result = []
    for i in range(count):
        text = output.split(f"@@{i}\n", 1)[1].split(f"@@{i + 1}\n", 1)[0]
        lines = [l for l in text.splitlines(keepends=True) if not l.startswith("(lldb) ")]
        result.append("".join(lines))
    return result


def main():
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "programs")
    case = next(c for c in truth.cases_for("x86_64") if c.name == "omit_fp")
    problems = []
    with tempfile.TemporaryDirectory(prefix="uk-lldb-cmd-") as work:
        pair = truth.build_pair(case, truth.X86_64, work, src)
        intact_core = truth.make_core(pair.intact, truth.X86_64)
        stripped_core = truth.make_core(pair.stripped, truth.X86_64)
        exe = pair.stripped.exe

        # Reference values: readelf, nm, LLDB alone on the intact core.
        readelf = run([need("readelf"), "--sframe", exe]).stdout
        fdes = int(re.search(r"Num FDEs: (\d+)", readelf).group(1))
        nm = run([need("nm"), "-S", pair.intact.exe]).stdout
        native = Lldb(plugin=False)
        intact_bt = threads(native.run(["bt"], pair.intact.exe, intact_core))
        pc0 = intact_bt[0][0]
        looked = native.run([f"image lookup -a {pc0:#x}"], pair.intact.exe, intact_core)
        file_address = int(re.search(r"Address: prog\[(0x[0-9a-f]+)\]", looked).group(1), 16)
        bias = pc0 - file_address

        ours = Lldb(plugin=True)
        commands = ["unwindkit sframe dump -m prog", "unw sf d -m prog",
                    "unwindkit sframe dump --json", f"unwindkit sframe lookup {pc0:#x}",
                    "unwindkit sframe check -m prog", "bt", "unwindkit bt", "help unwindkit"]
        out = ours.run(marked(commands), exe, stripped_core, check=False)
        dump, abbrev, dump_json, lookup, check, bt, our_bt, help_text = \
            pieces(out, len(commands))

        native_bt = threads(bt)[0] if threads(bt) else []
        levels = list(range(min(len(native_bt), 8)))
        want_regs = frame_registers(ours, exe, stripped_core, levels, regs="rip rsp")
        regs_out = ours.run(marked([f"unwindkit regs {n}" for n in levels]), exe,
                            stripped_core, check=False)
        got_regs = [registers(text) for text in pieces(regs_out, len(levels))]

        damaged_dir = os.path.join(work, "damagd")
        os.makedirs(damaged_dir)
        damaged = os.path.join(damaged_dir, "prog")
        shutil.copy(exe, damaged)
        offset, _ = section(damaged, ".sframe")
        with open(damaged, "r+b") as f:
            f.seek(offset + 2)  # sfp_version
            f.write(bytes([9]))
        bad = ours.run([SUCCEEDED.format("unwindkit sframe check -m prog")], damaged,
                       stripped_core, check=False)
        good = ours.run([SUCCEEDED.format("unwindkit sframe check -m prog")], exe,
                        stripped_core, check=False)

    expected = readelf[readelf.index("Contents of the SFrame section"):]
    for label, text in (("unwindkit sframe dump -m prog", dump), ("unw sf d -m prog", abbrev)):
        if text.strip() != expected.strip():
            problems.append(f"{label} differs from readelf --sframe:\n{text}\n---\n{expected}")

    try:
        doc = json.loads(dump_json)
        mine = [m for m in doc if m.get("file") == exe]
        if len(mine) != 1 or len(mine[0].get("functions", [])) != fdes:
            problems.append(f"--json: want one entry for {exe} with {fdes} functions:\n"
                            f"{dump_json[:2000]}")
    except json.JSONDecodeError as e:
        problems.append(f"--json does not parse: {e}\n{dump_json[:2000]}")

    covering = None
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            start, size = int(parts[0], 16), int(parts[1], 16)
            if start <= file_address < start + size:
                covering = (parts[3], start + bias, start + size + bias)
    if covering is None:
        problems.append(f"nm -S names no function at {file_address:#x}")
    elif f"function [{covering[1]:#x}, {covering[2]:#x})" not in lookup:
        problems.append(f"lookup {pc0:#x} does not give {covering[0]}'s range "
                        f"[{covering[1]:#x}, {covering[2]:#x}):\n{lookup}")

    if not re.search(rf"^{re.escape(exe)}: \.sframe OK$", check, re.MULTILINE):
        problems.append(f"check of the intact table does not pass:\n{check}")
    if "SUCCEEDED True" not in good:
        problems.append(f"check of the intact table does not succeed:\n{good}")
    if ".sframe+0x2" not in bad or "SUCCEEDED False" not in bad:
        problems.append(f"check of a damaged version byte does not fail at 0x2:\n{bad}")

    ours_pcs = [int(pc, 16) for pc in re.findall(r"^#\d+\s+(0x[0-9a-f]+)", our_bt, re.MULTILINE)]
    if len(native_bt) < 4 or ours_pcs != native_bt:
        problems.append(f"unwindkit bt PCs {[hex(p) for p in ours_pcs]} differ from LLDB's "
                        f"bt {[hex(p) for p in native_bt]}:\n{our_bt}")
    if native_bt != intact_bt[0]:
        problems.append("LLDB's bt with the plugin is not the intact twin's: the bt check "
                        "compares against a wrong backtrace")
    for n, got in zip(levels, got_regs):
        want = want_regs.get(n, {})
        if len(want) != 2 or {k: got.get(k) for k in want} != want:
            problems.append(f"unwindkit regs {n}: want {want}, got {got}")
            break

    for sub in SUBCOMMANDS:
        if not re.search(rf"^\s+{sub}\s+--? ", help_text, re.MULTILINE):
            problems.append(f"help unwindkit does not list {sub}:\n{help_text}")

    for p in problems:
        print("FAIL", p)
    print(f"{len(problems)} command checks failed" if problems else "all command checks passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
