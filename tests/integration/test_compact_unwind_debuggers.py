#!/usr/bin/env python3
"""`unwindkit compact-unwind dump|lookup` inside GDB and LLDB, on the Mach-O fixtures of
test_compact_unwind_llvm.py (built here at test time).

- dump: each debugger's text equals `llvm-objdump --macho --unwind-info`, for linked images
  and objects. GDB (Debian's loads no Mach-O objfile) takes the file path; LLDB dumps the
  target's own module (`target create` of the Mach-O file) and a file path.
- lookup: at each function's first byte and its middle (functions from `llvm-nm -n`), the
  entry's range is the one of the `llvm-objdump --unwind-info` entry holding the address. In LLDB the module is loaded with a slide
  (`target modules load --slide`) and the lookup takes the load address; the entry must be the
  same as at the unslid address. For the DWARF-mode functions (dwarf_mode-*.s, and the leaves
  clang gives DWARF mode), the rule each debugger prints at every CFI row equals the row of
  `llvm-dwarfdump --eh-frame`.
- LLDB with a universal file as the target (`target create --arch arm64`, never loaded):
  the dump of the arm64 slice equals llvm-objdump's `--arch=arm64`, lookups use that slice.
- --json of dump holds the entries llvm-objdump lists; GDB's lookup --json at each DWARF-mode
  CFI row gives llvm-dwarfdump's rule.
- a bad argument (no such file, an address no entry covers) is an error message; the
  debugger carries on (the next command's output follows).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lldb_plugin import CRASH_MARKERS, Lldb, plugin_path as lldb_plugin_path  # noqa: E402
from test_compact_unwind_llvm import build_fixtures, eh_frame_rows, parse_rule  # noqa: E402
from test_gdb_cores import plugin_path  # noqa: E402
from truth.tools import lldb as lldb_tool, llvm, need  # noqa: E402

FAILURES = []
DWARF_CHECKED = {}  # tool → DWARF-mode rules compared with llvm-dwarfdump
MARK = "@@unwindkit-test@@"
SLIDE = 0x10000
_FUNCTION = re.compile(r"^function: 0x([0-9a-f]+)-0x([0-9a-f]+)$", re.M)
_RULE = re.compile(r"^(?:rule|dwarf): (.*)$", re.M)


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def objdump(path):
    return subprocess.run([llvm("llvm-objdump"), "--macho", "--unwind-info", path],
                          capture_output=True, text=True, check=True).stdout


def functions(path):
    """[(start, next start)] of the __text symbols in address order, from llvm-nm."""
    out = subprocess.run([llvm("llvm-nm"), "-n", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    starts = sorted({int(a, 16) for a, t, name in (line.split() for line in out.splitlines())
                     if t in "Tt" and name != "__mh_execute_header"})
    return list(zip(starts, starts[1:]))


def gdb_outputs(commands):
    """Each command's output (stdout and stderr, in order) from one GDB run."""
    cmd = [need("gdb"), "-batch", "-nx", "-ex", f"source {plugin_path()}"]
    for c in commands:
        cmd += ["-ex", f"echo {MARK}\\n", "-ex", c]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    expect("Traceback" not in p.stdout and "Python Exception" not in p.stdout,
           f"Python error inside GDB:\n{p.stdout[-2000:]}")
    parts = p.stdout.split(MARK + "\n")[1:]
    expect(len(parts) == len(commands), f"GDB ran {len(parts)} of {len(commands)} commands")
    return parts


def lldb_outputs(lldb, commands, exe):
    """Each command's output from one LLDB run: batch mode echoes `(lldb) command` first."""
    out = lldb.run(commands, exe=exe, check=False)
    parts = re.split(r"^\(lldb\) .*\n", out, flags=re.M)
    return parts[-len(commands):]


def check_lookup(tool, path, addr, want_start, want_end, text, rows):
    what = f"{tool} lookup {path} {addr:#x}"
    m = _FUNCTION.search(text)
    expect(m is not None, f"{what}: no function line in {text!r}")
    if m:
        expect((int(m.group(1), 16), int(m.group(2), 16)) == (want_start, want_end),
               f"{what}: {m.group(0)}, llvm-objdump gives {want_start:#x}-{want_end:#x}")
    if addr in rows:
        r = _RULE.search(text)
        expect(r is not None and "dwarf: " in text, f"{what}: no DWARF rule in {text!r}")
        if r:
            DWARF_CHECKED[tool] = DWARF_CHECKED.get(tool, 0) + 1
            expect(parse_rule(r.group(1)) == rows[addr],
                   f"{what}: {r.group(1)}, llvm-dwarfdump says {rows[addr]}")


_SECOND_LEVEL = re.compile(r"^\s+\[\d+\]: function offset=0x([0-9a-f]+), encoding", re.M)
_TOP_LEVEL = re.compile(r"^\s+\[\d+\]: function offset=0x([0-9a-f]+), 2nd level page", re.M)


def objdump_entries(path, image_base):
    """[(start, end)] of the __unwind_info entries llvm-objdump lists: the linker merges
    neighbours with equal encodings, so an entry may span several functions. The last one
    ends at the sentinel's function offset."""
    text = objdump(path)
    starts = sorted({image_base + int(o, 16) for o in _SECOND_LEVEL.findall(text)})
    end = image_base + max(int(o, 16) for o in _TOP_LEVEL.findall(text))
    return list(zip(starts, starts[1:] + [end]))


def lookup_points(path):
    """[(address, entry start, entry end)] at each function's first byte and its middle
    (functions from llvm-nm, entries from llvm-objdump), and at every CFI row of a DWARF-mode
    fixture; plus {row address: (cfa, regs)} from llvm-dwarfdump."""
    nm = subprocess.run([llvm("llvm-nm"), path], capture_output=True, text=True, check=True).stdout
    image_base = next(int(line.split()[0], 16) for line in nm.splitlines()
                      if line.endswith(" __mh_execute_header"))
    entries = objdump_entries(path, image_base)
    rows, fdes = {}, {}  # fdes: FDE end → its first row's address (the FDE's start)
    for addr, end, cfa, regs in eh_frame_rows(path):
        rows[addr] = (cfa, regs)
        fdes.setdefault(end, addr)
    pcs = set(rows)
    for start, end in functions(path):
        pcs.add(start)
        middle = start + (end - start) // 2
        # A DWARF-mode function's padding after its FDE is no code: no rule there.
        if not any(a <= start < e and middle >= e for e, a in fdes.items()):
            pcs.add(middle)
    points = []
    for pc in sorted(pcs):
        entry = next((e for e in entries if e[0] <= pc < e[1]), None)
        expect(entry is not None, f"{path} {pc:#x}: in no entry llvm-objdump lists")
        if entry:
            points.append((pc, *entry))
    return points, rows


def check_gdb(files, images):
    commands, expected = [], []
    for _, path in files:
        commands.append(f"unwindkit compact-unwind dump {path}")
        expected.append(("dump", path, objdump(path)))
    for _, path in images:
        if "table" in path:
            continue
        points, rows = lookup_points(path)
        for addr, start, end in points:
            commands.append(f"unwindkit compact-unwind lookup {addr:#x} {path}")
            expected.append(("lookup", path, (addr, start, end, rows)))
    for _, path in images:
        if "dwarf_mode" in path:
            _, rows = lookup_points(path)
            for addr, row in rows.items():
                commands.append(f"unwindkit compact-unwind lookup --json {addr:#x} {path}")
                expected.append(("lookup_json", path, (addr, row)))
    probe = next(p for _, p in images if "frames" in p)
    commands.append(f"unwindkit compact-unwind dump --json {probe}")
    expected.append(("json", probe, objdump(probe)))
    commands += ["unwindkit compact-unwind dump /nonexistent/x.out",
                 f"unwindkit compact-unwind lookup 0x10 {probe}", "echo still-alive\\n"]
    expected += [("error", "No Mach-O objfile or file", None),
                 ("error", "no compact unwind entry covers 0x10", None),
                 ("alive", "still-alive", None)]
    outputs = gdb_outputs(commands)
    counts = check_outputs("gdb", outputs, expected)
    print("gdb:", counts)


def check_outputs(tool, outputs, expected):
    counts = {}
    for out, (kind, path, want) in zip(outputs, expected):
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "dump":
            expect(out == want, f"{tool} dump differs from llvm-objdump: {path}\n{out[:500]}")
        elif kind == "lookup":
            check_lookup(tool, path, *want[:3], out, want[3])
        elif kind == "json":
            check_json(tool, path, out, want)
        elif kind == "lookup_json":
            addr, row = want
            try:
                doc = json.loads(out)
            except ValueError:
                doc = {}
            what = f"{tool} lookup --json {path} {addr:#x}: {out!r}"
            expect(doc.get("pc") == addr and doc.get("mode") == "DWARF" and
                   doc.get("result") == "dwarf", what)
            expect("rule" in doc and parse_rule(doc["rule"]) == row,
                   f"{what}: llvm-dwarfdump says {row}")
        elif kind != "any":
            expect(path.lower() in out.lower(), f"{tool}: expected {path!r}, got {out!r}")
    return counts


def check_json(tool, path, out, ref):
    try:
        doc = json.loads(out)
    except ValueError:
        expect(False, f"{tool} dump --json: not JSON: {out[:300]!r}")
        return
    got = set()
    for sl in doc["slices"]:
        for t in sl["tables"]:
            for p in t.get("pages", []):
                for e in p["entries"]:
                    got.add((e["function_offset"], e["encoding"]))
    want = {(int(f, 16), int(e, 16)) for f, e in
            re.findall(r"function offset=0x([0-9a-f]+), encoding(?:\[\d+\])?=0x([0-9a-f]+)", ref)}
    expect(got == want, f"{tool} dump --json of {path}: entries differ from llvm-objdump")


def check_lldb(tmp, files, images):
    lldb = Lldb(plugin=True)
    counts = {}
    for _, path in images:
        if "table" in path:
            continue
        other = next(p for _, p in files if p != path)
        name = os.path.basename(path)
        commands = ["unwindkit compact-unwind dump", f"unwindkit compact-unwind dump {other}",
                    f"target modules load --file {name} --slide {SLIDE:#x}"]
        expected = [("dump", path, objdump(path)), ("dump", other, objdump(other)),
                    ("skip", "", None)]
        points, rows = lookup_points(path)
        for addr, start, end in points:
            # The load address (slide applied) in the loaded module, the file address of a file.
            commands += [f"unwindkit compact-unwind lookup {addr + SLIDE:#x}",
                         f"unwindkit compact-unwind lookup {addr:#x} {path}"]
            expected += [("lookup", path, (addr, start, end, rows))] * 2
        outputs = lldb_outputs(lldb, commands, path)
        for command, out in zip(commands, outputs):
            if command.startswith("unwindkit compact-unwind lookup") and len(command.split()) == 4:
                expect(f"(slide {SLIDE:#x})" in out, f"lldb {command}: slide not applied: {out!r}")
        expected = [e if e[0] != "skip" else ("any", "", None) for e in expected]
        for k, v in check_outputs("lldb", outputs, expected).items():
            counts[k] = counts.get(k, 0) + v
    # A universal file as the target, its arm64 slice chosen (`target create --arch`), never
    # loaded: addresses are file addresses, and the slice is the target's, not the first.
    thin = {a: p for a, p in images if "dwarf_mode" in p}
    fat = os.path.join(tmp, "dwarf_mode-fat.out")
    subprocess.run([llvm("llvm-lipo"), "-create", thin["x86_64"], thin["arm64"], "-output", fat],
                   check=True)
    ref = subprocess.run([llvm("llvm-objdump"), "--macho", "--unwind-info", "--arch=arm64", fat],
                         capture_output=True, text=True, check=True).stdout
    points, rows = lookup_points(thin["arm64"])
    commands = ["unwindkit compact-unwind dump --arch arm64"]
    expected = [("dump", fat, ref)]
    for addr, start, end in points:
        commands.append(f"unwindkit compact-unwind lookup {addr:#x}")
        expected.append(("lookup", fat, (addr, start, end, rows)))
    pre = f"target create --arch arm64 {fat}"
    outputs = lldb.run([pre] + commands)
    outputs = re.split(r"^\(lldb\) .*\n", outputs, flags=re.M)[-len(commands):]
    for k, v in check_outputs("lldb (universal)", outputs, expected).items():
        counts[k] = counts.get(k, 0) + v
    # Bad arguments: an error message, and LLDB carries on with the next command.
    probe = next(p for _, p in images if "frames" in p)
    for command, message in (("unwindkit compact-unwind lookup 0xfffffffffff00000", "is in no module"),
                             ("unwindkit compact-unwind lookup 0x10",  # __PAGEZERO
                              "no compact unwind entry covers 0x10"),
                             ("unwindkit compact-unwind dump nosuch",
                              "no Mach-O module or file named nosuch"),
                             (f"unwindkit compact-unwind lookup 0x10 {probe}",
                              "no compact unwind entry covers 0x10")):
        # `-o` commands stop at the first error in batch mode; a sourced file need not.
        script = os.path.join(tmp, "lldb-error-commands")
        with open(script, "w") as f:
            f.write(f"{command}\nscript print('alive')\n")
        p = subprocess.run([lldb_tool(), "-b", "-x", "-o", f"plugin load {lldb_plugin_path()}",
                            "-o", f"target create {probe}", "-o", f"command source -e false {script}"],
                           capture_output=True, text=True, timeout=300)
        expect(not any(m in p.stdout + p.stderr for m in CRASH_MARKERS), f"lldb crashed: {command}")
        expect(message in p.stderr, f"lldb {command}: expected {message!r} in {p.stderr!r}")
        expect("alive" in p.stdout.split(command, 1)[-1], f"lldb did not carry on after {command}")
    print("lldb:", counts)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        images, objects = build_fixtures(tmp)
        files = images + objects
        check_gdb(files, images)
        check_lldb(tmp, files, images)
    print("DWARF-mode rules checked against llvm-dwarfdump:", DWARF_CHECKED)
    for tool in ("gdb", "lldb"):
        expect(DWARF_CHECKED.get(tool, 0) >= 6, f"{tool}: too few DWARF-mode rules checked")
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
