"""Callee-saved registers and arguments in every frame, as GDB and LLDB show them to a user
(`info registers` / `register read`, `info args` / `frame variable`, lldb-dap's Registers
view), and their comparison with the truth: the same debugger on the intact copy.

A value is *equal* (the truth's), *unavailable* (the debugger says it does not know: GDB
`<not saved>` / `<unavailable>` / `<optimized out>`, LLDB `error: unavailable` or any `<...>`
variable text) or *wrong*. Only values the truth shows are compared, in frames >= 1 whose PC
is the truth's PC at the same activation record."""
import dataclasses
import os
import re

from .tools import need, run

HERE = os.path.dirname(os.path.abspath(__file__))
GDB_SCRIPT = os.path.join(HERE, "gdb_frame_values.py")
LLDB_SCRIPT = os.path.join(HERE, "lldb_frame_values.py")

# The callee-saved registers of each ABI, plus the stack pointer and PC (the CFA and return
# address in a caller frame), by the names both debuggers accept.
REGISTERS = {
    "x86_64": ("rbx", "rbp", "r12", "r13", "r14", "r15", "rsp", "rip"),
    "aarch64": (*(f"x{n}" for n in range(19, 30)), "sp", "pc", *(f"d{n}" for n in range(8, 16))),
}
_LLDB_ALIASES = {"fp": "x29", "lr": "x30"}  # `register read x29` prints `fp = ...`

_GDB_REG = re.compile(r"^(\w+)\s+(\S.*)$")
_LLDB_REG = re.compile(r"^\s*(\w+)\s*= (.*)$")
_GDB_ARG = re.compile(r"^(\w+) = (.*)$")  # nested members are indented
_LLDB_ARG = re.compile(r"^\(.*\) (\w+) = (.*)$")
_GDB_UNAVAILABLE = ("<not saved>", "<unavailable>", "<optimized out>")
_LLDB_UNAVAILABLE = "error: unavailable"
_GDB_VECTOR_BITS = re.compile(r"\bu = (0x[0-9a-fA-F]+|-?\d+)")  # d8: {f = ..., u = ..., s = ...}


@dataclasses.dataclass
class Frame:
    pc: int
    kind: str  # real | inline
    dumped: bool = False  # registers/arguments were printed for it
    regs: dict = dataclasses.field(default_factory=dict)  # name: int, or None if unavailable
    args: dict = dataclasses.field(default_factory=dict)  # name: value token, None if unavailable


@dataclasses.dataclass
class ThreadValues:
    tid: int
    frames: dict = dataclasses.field(default_factory=dict)  # (record, inline depth): Frame
    pcs: list = dataclasses.field(default_factory=list)  # each activation record's PC

    def record(self, n):
        """The real frame of activation record n, or None."""
        return next((f for (r, _), f in self.frames.items() if r == n and f.kind == "real"),
                    None)


def _gdb_register(text):
    if text.startswith("{"):
        if any(u in text for u in _GDB_UNAVAILABLE):
            return None
        m = _GDB_VECTOR_BITS.search(text)
        if not m:
            raise ValueError(f"GDB vector register text not understood: {text!r}")
        return int(m.group(1), 0) & (1 << 64) - 1
    if text.startswith(_GDB_UNAVAILABLE):
        return None
    return int(text.split()[0], 0)


def _lldb_register(text):
    if text.startswith(_LLDB_UNAVAILABLE):
        return None
    return int(text.split()[0], 16)


def _arg_token(text):
    """The value's first token (a number, pointer...), None when the debugger shows `<...>`:
    `<optimized out>`, `<unavailable>`, `<could not evaluate DW_OP_entry_value...>`. Also a
    register's value in lldb-dap's Registers view (`0x...`, maybe with what it points at)."""
    text = text.strip()
    if not text or text.startswith("<"):
        return None
    token = text.split()[0]
    try:
        return int(token, 0)
    except ValueError:
        return token


def parse(output, debugger):
    """[ThreadValues] sorted by thread id, from gdb_frame_values.py or lldb_frame_values.py
    output. `debugger` is "gdb" or "lldb"."""
    reg_line, arg_line = (_GDB_REG, _GDB_ARG) if debugger == "gdb" else (_LLDB_REG, _LLDB_ARG)
    value = _gdb_register if debugger == "gdb" else _lldb_register
    threads, thread, frame, section = {}, None, None, None
    for line in output.splitlines():
        if line.startswith("@@FRAME "):
            _, tid, rec, depth, pc, kind = line.split()
            thread = threads.setdefault(int(tid), ThreadValues(int(tid)))
            frame = Frame(int(pc, 16), kind)
            thread.frames[(int(rec), int(depth))] = frame
            if kind == "real":
                thread.pcs.append(frame.pc)
            section = None
        elif line in ("@@REGS", "@@ARGS") and frame is not None:
            section, frame.dumped = line, True
        elif line.startswith("@@END "):
            frame, section = None, None
        elif line.startswith("@@ERROR"):
            raise RuntimeError(f"{debugger}: {line}")
        elif section == "@@REGS":
            m = reg_line.match(line)
            if m:
                name = _LLDB_ALIASES.get(m.group(1), m.group(1))
                frame.regs[name] = value(m.group(2).strip())
        elif section == "@@ARGS":
            m = arg_line.match(line)
            if m:
                frame.args[m.group(1)] = _arg_token(m.group(2))
    return [threads[t] for t in sorted(threads)]


def gdb_values(gdb, exe, core, regs, plugin=None, settings=(), timeout=600, env=None):
    """GDB's values in every frame of every thread; `plugin` is the file to source first,
    `settings` GDB commands run before the files load (solib-search-path, sysroot)."""
    cmd = [need(gdb), "-batch", "-nx", "-iex", "set pagination off", "-iex", "set width 0"]
    for s in settings:
        cmd += ["-iex", s]
    if plugin:
        cmd += ["-ex", f"source {plugin}"]
    cmd += ["-x", GDB_SCRIPT, "-ex", f"uk-frame-values {' '.join(regs)}", exe, core]
    p = run(cmd, timeout=timeout, check=False, env=env)
    if "Traceback" in p.stderr or "Python Exception" in p.stderr or "@@END" not in p.stdout:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}\n"
                           f"{p.stderr[-2000:]}")
    return parse(p.stdout, "gdb")


def lldb_values(lldb, exe, core, regs):
    """LLDB's values in every frame of every thread; `lldb` is an lldb_plugin.Lldb."""
    # The plugin installs its side files before any LLDB command that unwinds (as before a
    # user's first `bt`), not before a script's SB calls: `thread list` is such a command.
    out = lldb.run([f"command script import {LLDB_SCRIPT}", "thread list",
                    f"uk-frame-values {' '.join(regs)}"], exe, core, check=False)
    if "@@END" not in out:
        raise RuntimeError(f"lldb printed no frame values for {exe} {core}:\n{out[-2000:]}")
    return parse(out, "lldb")


def dap_shown(index, count, head=64, tail=8):
    """For dap_client.core_registers: the frames whose registers are read, as
    lldb_frame_values.py chooses them (its HEAD and TAIL): a deep recursion's middle would
    cost thousands of requests and show nothing new."""
    return index < head or index >= count - tail


def dap_values(registers, regs):
    """[ThreadValues] sorted by thread id, from dap_client.core_registers. lldb-dap lists an
    inlined call as a frame of its own and says nothing of which are: every frame counts as an
    activation record here, on both sides alike."""
    threads = []
    for tid in sorted(registers):
        thread = ThreadValues(tid)
        for index, (pc, values) in enumerate(registers[tid]):
            frame = Frame(pc, "real", dumped=values is not None)
            for name, text in (values or {}).items():
                name = _LLDB_ALIASES.get(name, name)
                if name in regs:
                    frame.regs[name] = _arg_token(text)  # `0x...`, or LLDB's `<error: ...>`
            thread.frames[(index, 0)] = frame
            thread.pcs.append(pc)
        threads.append(thread)
    return threads


@dataclasses.dataclass
class Tally:
    """One debugger run on one program against its truth."""
    threads: int = 0
    untrusted: list = dataclasses.field(default_factory=list)  # threads whose frame #0 differs
    lengths: list = dataclasses.field(default_factory=list)  # threads of another frame count
    frames: int = 0  # truth frames >= 1 whose values were printed
    aligned: int = 0  # ... that ours has at the same record with the same PC
    values: int = 0
    equal: int = 0
    unavailable: int = 0
    wrong: int = 0
    args: int = 0
    args_equal: int = 0
    args_unavailable: int = 0
    args_wrong: int = 0
    problems: list = dataclasses.field(default_factory=list)  # wrong values, as text

    def add(self, other):
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def _show(v):
    return "unavailable" if v is None else (f"{v:#x}" if isinstance(v, int) else str(v))


def _frame0_differs(truth, ours):
    """The names whose frame #0 value differs: frame #0 needs no unwinding, so any difference
    means the two runs saw different states (two cores of a spinning thread)."""
    t, o = truth.record(0), ours.record(0)
    if t is None or o is None or t.pc != o.pc:
        return ["pc"]
    return [n for n, v in t.regs.items() if v is not None and o.regs.get(n) != v]


def compare(truth_threads, our_threads, regs):
    """Tally of `our_threads` against `truth_threads` (threads paired in thread-id order)."""
    tally = Tally(threads=len(truth_threads))
    if len(truth_threads) != len(our_threads):
        tally.problems.append(f"{len(truth_threads)} threads in the truth, "
                              f"{len(our_threads)} with the plugin")
        tally.wrong += 1
        return tally
    for truth, ours in zip(truth_threads, our_threads):
        differs = _frame0_differs(truth, ours)
        if differs:
            tally.untrusted.append(f"{truth.tid}: {', '.join(differs)}")
            continue
        if len(truth.pcs) != len(ours.pcs):  # a deep stack's last records then differ too
            tally.lengths.append(f"{truth.tid}: {len(truth.pcs)} records in the truth, "
                                 f"{len(ours.pcs)} with the plugin")
        for (rec, depth), want in truth.frames.items():
            if rec == 0 or not want.dumped:
                continue
            aligned = rec < len(ours.pcs) and ours.pcs[rec] == truth.pcs[rec]
            got = ours.frames.get((rec, depth))
            if want.kind == "real":
                tally.frames += 1
                if aligned and got is not None and got.dumped:
                    tally.aligned += 1
            if not aligned or got is None or not got.dumped:
                continue
            where = f"thread {truth.tid} frame record {rec} pc {want.pc:#x}"
            _count(tally, "", {n: want.regs.get(n) for n in regs}, got.regs, where)
            _count(tally, "args", want.args, got.args, f"{where} argument")
    return tally


def _count(tally, kind, want, have, where):
    """Adds each value the truth shows in `want` to the tally's `kind` counters ("": the
    registers, "args": the arguments) as equal, unavailable or wrong in `have`."""
    prefix = f"{kind}_" if kind else ""
    for name, value in want.items():
        if value is None:
            continue  # the truth shows no value: nothing to compare
        setattr(tally, kind or "values", getattr(tally, kind or "values") + 1)
        got = have.get(name, "not shown")
        outcome = "equal" if got == value else "unavailable" if got is None else "wrong"
        setattr(tally, prefix + outcome, getattr(tally, prefix + outcome) + 1)
        if outcome == "wrong":
            tally.problems.append(f"{where} {name}: truth {_show(value)}, plugin {_show(got)}")
