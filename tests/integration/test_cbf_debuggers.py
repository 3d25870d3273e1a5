#!/usr/bin/env python3
"""`unwindkit cbf decode|encode` inside GDB and LLDB, on the core of programs/cbf_prog.c.

decode: the program builds a CBF record by hand (not with our encoder) from the addresses of
its own functions, keeps it in `cbf_blob` and at the very end of a mapping (`cbf_tail`), and
aborts. Both debuggers decode it from the core (by expression, by address with LEN, and at
the end of the mapping, where a 64 KiB read fails) and must print the program's frame list
with each frame's function and offset as `nm -S` places the address (a return address at
address - 1, the call) and the file:line `addr2line` gives for it.

encode: `unwindkit cbf encode -t 1` of the crashing thread, written raw and as base64, decodes
with the CLI (`unwindkit cbf decode --json`) to the PCs the debugger itself lists for that
thread (GDB: the truth harness's gdb_frames.py; LLDB: `bt`), a pc then return addresses,
and the printed size must be below the printed plain size (a word per frame).
Errors (an unreadable address) print a message and the debugger carries on."""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth  # noqa: E402
from truth.debuggers import HERE as TRUTH_DIR  # noqa: E402
from test_gdb_cores import run_gdb  # noqa: E402
from lldb_plugin import Lldb, threads  # noqa: E402

UK = os.environ["UNWINDKIT"]
# The record cbf_prog.c writes (its header comment): (kind, function, offset) or
# ("omit", count) or ("truncated",); `rep` makes four copies of beta + 8.
RECORD = ([("pc", "alpha", 4)] + [("ra", "beta", 8)] * 4 +
          [("omit", 5), ("ra", "gamma_fn", 3), ("ra", "gamma_fn", 0), ("async", "delta_fn", 0),
           ("omit", 200),
           ("pc", "main", 1), ("truncated",)])
_LINE = re.compile(r"^#(\d+)(?:-#(\d+))?\s+(pc|ra|async|omit|truncated)\b\s*(.*)$")
_ADDRESS = re.compile(r"^(0x[0-9a-f]+) in (\S+)\+(\d+) \((\S+)\)(?: at (\S+):(\d+))?"
                      r"(?: \(x(\d+)\))?$")
_OMIT = re.compile(r"^(\d+) frames omitted$")
_SIZE = re.compile(r"^size: (\d+) bytes \(plain: (\d+) bytes\)$", re.MULTILINE)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def build(work):
    src = os.path.join(os.environ["UNWINDKIT_SOURCE_DIR"], "tests", "integration", "programs",
                       "cbf_prog.c")
    d = os.path.join(work, "cbf")
    os.makedirs(d)
    exe = os.path.join(d, "prog")
    truth.tools.run(["gcc", "-O0", "-g", "-no-pie", "-fno-omit-frame-pointer", "-o", exe, src])
    return exe, truth.make_core(truth.build.Build(d, exe, []), truth.X86_64)


def nm_functions(exe):
    """{name: (start, size)} of the program's functions, from `nm -S`."""
    out = truth.tools.run(["nm", "-S", exe]).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            funcs[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return funcs


def nm_address(exe, name):
    for line in truth.tools.run(["nm", exe]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    raise AssertionError(f"nm: no {name} in {exe}")


def expected_lines(exe):
    """The record's frames as the debuggers must print them, from nm and addr2line."""
    funcs = nm_functions(exe)
    frames = []
    for entry in RECORD:
        if entry[0] in ("omit", "truncated"):
            frames.append(entry)
            continue
        kind, name, offset = entry
        addr = funcs[name][0] + offset
        lookup = addr - 1 if kind == "ra" else addr
        owner = next(n for n, (start, size) in funcs.items() if start <= lookup < start + size)
        where = truth.tools.run(["addr2line", "-e", exe, f"{lookup:#x}"]).stdout.split()[0]
        file, line = where.rsplit(":", 1)
        frames.append((kind, addr, owner, addr - funcs[owner][0], "prog",
                       os.path.basename(file), int(line)))
    return frames


def parse_decode(text):
    """Frames (expanded from runs) of one `unwindkit cbf decode` output, in the form of
    expected_lines, or a string saying what did not parse."""
    frames, index = [], 0
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        first, last, kind, rest = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        count = int(last) - first + 1 if last else 1
        if first != index:
            return f"frame number #{first}, expected #{index}: {line!r}"
        if kind == "truncated":
            frame = ("truncated",)
        elif kind == "omit":
            o = _OMIT.match(rest)
            if not o:
                return f"bad omit line {line!r}"
            frame = ("omit", int(o.group(1)))
        else:
            a = _ADDRESS.match(rest)
            if not a:
                return f"bad frame line {line!r}"
            if int(a.group(7) or 1) != count:
                return f"repeat count and frame range disagree: {line!r}"
            frame = (kind, int(a.group(1), 16), a.group(2), int(a.group(3)), a.group(4),
                     a.group(5), int(a.group(6)) if a.group(6) else None)
        frames += [frame] * count
        index += count
    return frames


def check_decoded(label, text, want):
    got = parse_decode(text)
    if isinstance(got, str):
        check(False, f"{label}: {got}\n{text}")
        return
    check(got == want, f"{label}: frames differ\n  want {want}\n  got  {got}\n{text}")
    check(text.count("CBF record: 64-bit, 12 frames") == 1, f"{label}: header:\n{text}")


def cli_frames(path, *source):
    p = subprocess.run([UK, "cbf", "decode", *source, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return f"CLI exit {p.returncode}: {p.stderr}"
    records = json.loads(p.stdout)["records"]
    out = []
    for f in records[0]["frames"]:
        out += [(f["kind"], int(f["address"], 16) if "address" in f else None)] * f["repeat"]
    return out


def check_encoded(label, output, raw_file, b64_file, want_pcs):
    """The file written by `cbf encode -o` decodes to want_pcs: a pc, then return addresses."""
    want = [("pc", want_pcs[0])] + [("ra", pc) for pc in want_pcs[1:]]
    check(cli_frames(raw_file, raw_file) == want,
          f"{label}: raw file decodes to {cli_frames(raw_file, raw_file)}, want {want}")
    with open(b64_file) as f:
        b64 = f.read().strip()
    check(cli_frames(b64_file, "--base64", b64) == want, f"{label}: base64 file frames")
    with open(raw_file, "rb") as f:
        raw = f.read()
    # Python's base64 of the raw bytes, without padding (a Swift Backtrace's form).
    check(b64 == base64.b64encode(raw).decode().rstrip("="), f"{label}: base64 != raw bytes")
    sizes = _SIZE.findall(output)
    check(len(sizes) == 2, f"{label}: no `size: N bytes (plain: M bytes)` lines:\n{output}")
    for size, plain in sizes:
        check(int(size) == len(raw) and int(plain) == 8 * len(want_pcs) and
              int(size) < int(plain),
              f"{label}: size {size} (file {len(raw)}), plain {plain} for {len(want_pcs)} frames")


def between(text, start, end):
    return text.split(start, 1)[1].split(end, 1)[0] if start in text else ""


def gdb_session(exe, core, blob, length, work):
    raw, b64 = os.path.join(work, "gdb.cbf"), os.path.join(work, "gdb.b64")
    out = run_gdb("gdb", exe, core, script=os.path.join(TRUTH_DIR, "gdb_frames.py"), commands=[
        "echo @@NAME\\n", "unwindkit cbf decode cbf_blob",
        "echo @@LEN\\n", f"unwindkit cbf decode {blob:#x} {length}",
        "echo @@TAIL\\n", "unwindkit cbf decode cbf_tail",
        # The tail case proves the shrinking read only if the byte after the record fails.
        "python exec(\"try:\\n gdb.selected_inferior().read_memory(int(gdb.parse_and_eval("
        "'cbf_tail + cbf_blob_len')), 1); print('@@READABLE')\\n"
        "except gdb.MemoryError: print('@@UNREADABLE')\")",
        "echo @@ENC\\n", f"unwindkit cbf encode -t 1 -o {raw}",
        f"unwindkit cbf encode -t 1 -o {b64} --base64",
        "echo @@BAD\\n", "unwindkit cbf decode 0", "echo @@END\\n"])
    return out, raw, b64


def lldb_session(exe, core, blob, length, work):
    raw, b64 = os.path.join(work, "lldb.cbf"), os.path.join(work, "lldb.b64")
    out = Lldb(plugin=True).run([
        "script print('@@NAME')", "unwindkit cbf decode cbf_blob",
        "script print('@@LEN')", f"unwindkit cbf decode {blob:#x} {length}",
        "script print('@@TAIL')", "unwindkit cbf decode cbf_tail",
        "script print('@@ENC')", f"unwindkit cbf encode -t 1 -o {raw}",
        f"unwindkit cbf encode -t 1 -o {b64} --base64",
        "script print('@@BT')", "bt all",
        # `lldb -b` stops at a failed command: run it through the interpreter to go on.
        "script r = lldb.SBCommandReturnObject(); lldb.debugger.GetCommandInterpreter()"
        ".HandleCommand('unwindkit cbf decode 0', r); print('@@BAD', r.GetError())",
        "script print('@@END')"],
        exe, core, check=False)
    return out, raw, b64


def main():
    with tempfile.TemporaryDirectory(prefix="uk-cbf-dbg-") as work:
        try:
            exe, core = build(work)
        except truth.Skip as e:
            print(f"SKIP: {e}")
            return 0
        want = expected_lines(exe)
        blob = nm_address(exe, "cbf_blob")
        # The record's length as GDB reads it from the program's own variable.
        length = int(run_gdb("gdb", exe, core, plugin=False,
                             commands=["printf \"@@%lu\\n\", cbf_blob_len"])
                     .split("@@")[1].split()[0])

        out, raw, b64 = gdb_session(exe, core, blob, length, work)
        for label, start, end in (("name", "@@NAME", "@@LEN"), ("LEN", "@@LEN", "@@TAIL"),
                                  ("tail", "@@TAIL", "@@ENC")):
            check_decoded(f"gdb decode {label}", between(out, start, end), want)
        check("@@UNREADABLE" in out, "the byte after cbf_tail's record is readable")
        gdb_pcs = [int(line.split()[3], 16) for line in out.splitlines()
                   if line.startswith("FRAME ")]
        check(len(gdb_pcs) > 5, f"gdb_frames.py listed {len(gdb_pcs)} frames")
        check_encoded("gdb encode", between(out, "@@ENC", "@@BAD"), raw, b64, gdb_pcs)
        check("@@END" in out, f"gdb did not carry on after an unreadable address:\n{out}")
        check("@@BAD\n@@END" in out, f"gdb printed more than an error for 0x0:\n{out}")

        try:
            out, raw, b64 = lldb_session(exe, core, blob, length, work)
        except truth.Skip as e:
            print(f"SKIP lldb: {e}")
            out = None
        if out is not None:
            for label, start, end in (("name", "@@NAME", "@@LEN"), ("LEN", "@@LEN", "@@TAIL"),
                                      ("tail", "@@TAIL", "@@ENC")):
                check_decoded(f"lldb decode {label}", between(out, start, end), want)
            lldb_threads = threads(between(out, "@@BT", "@@BAD"))
            check(len(lldb_threads) == 1 and len(lldb_threads[0]) > 5,
                  f"lldb bt: {lldb_threads}")
            if lldb_threads:
                check_encoded("lldb encode", between(out, "@@ENC", "@@BT"), raw, b64,
                              lldb_threads[0])
            check("@@BAD error: cannot read memory at 0x0" in out and "@@END" in out,
                  f"lldb did not report an unreadable address and carry on:\n{out}")
    print("FAIL" if failures else "ok", f"cbf in gdb and lldb ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
