"""`unwindkit cbf decode|encode`: Swift Compact Backtrace Format inside GDB.

decode reads CBF bytes from process or core memory and symbolizes each frame with GDB;
encode turns GDB's backtrace of a thread into CBF. The bytes go through the core's decoder
and encoder (`_unwindkit.cbf_*`); problems print as GDB errors, never as tracebacks.
"""

import os

import gdb

import _unwindkit

# Bytes read when no LEN is given: the record ends at its end/trunc instruction, well before
# this for any real backtrace (a million-frame `rep` is 8 bytes).
_DEFAULT_WINDOW = 64 * 1024
_MAX_ENCODE_FRAMES = 100000
_NOT_ADDRESSES = ("omit", "truncated")


def _address_arg(text):
    """An expression's address: arrays (a global `unsigned char blob[]`) decay to their start."""
    value = gdb.parse_and_eval(text)
    if value.type.strip_typedefs().code == gdb.TYPE_CODE_ARRAY:
        value = value.address
    return int(value) & 0xFFFFFFFFFFFFFFFF


def _read(addr, length):
    return bytes(gdb.selected_inferior().read_memory(addr, length))


def _read_window(addr, window):
    """The longest readable prefix of [addr, addr + window): near the end of a mapping the
    full window fails, so search for the last readable byte count."""
    try:
        return _read(addr, window)
    except gdb.MemoryError:
        pass
    good, bad = b"", window  # bad: a length known to fail
    while bad - len(good) > 1:
        mid = (len(good) + bad) // 2
        try:
            good = _read(addr, mid)
        except gdb.MemoryError:
            bad = mid
    if not good:
        raise gdb.GdbError(f"unwindkit: cannot read memory at {addr:#x}")
    return good


def _symbol(addr):
    """(name, start) of the symbol GDB knows at addr (minimal symbols too), or None."""
    try:
        text = gdb.execute(f"info symbol {addr:#x}", to_string=True).strip()
    except gdb.error:
        return None
    if " in section " not in text:
        return None
    where = text.split(" in section ", 1)[0]
    name, _, offset = where.partition(" + ")
    return name, addr - (int(offset) if offset else 0)


def _module_name(addr):
    solib = gdb.current_progspace().solib_name(addr)
    path = solib or gdb.current_progspace().filename or "?"
    return os.path.basename(path)


def describe_address(addr, kind):
    """`0x... in name+off (module) at file:line` as GDB symbolizes addr. A return address
    is looked up at addr - 1 (the call), as `bt` does, so a call that ends its function still
    names the caller."""
    lookup = addr - 1 if kind == "ra" and addr > 0 else addr
    text = f"{addr:#018x}"
    sym = _symbol(lookup)
    if sym is not None:
        text += f" in {sym[0]}+{addr - sym[1]} ({_module_name(lookup)})"
    else:
        text += " in ??"
    sal = gdb.find_pc_line(lookup)
    if sal.symtab is not None and sal.line:
        text += f" at {os.path.basename(sal.symtab.filename)}:{sal.line}"
    return text


def format_record(record):
    """One line per run of equal frames: `#N kind address ...`, `#N-#M` for a repeat."""
    bits, runs, size, problem = record
    total = sum(count for _, _, count in runs)
    lines = [f"CBF record: {bits}-bit, {total} frames, {size} bytes"]
    index = 0
    for kind, value, count in runs:
        label = f"#{index}" if count == 1 else f"#{index}-#{index + count - 1}"
        if kind == "omit":
            body = f"{value} frames omitted"
        elif kind == "truncated":
            body = ""
        else:
            body = describe_address(value, kind)
        repeat = f" (x{count})" if count > 1 else ""
        lines.append(f"{label:<8} {kind:<9} {body}{repeat}".rstrip())
        index += count
    if problem:
        lines.append(f"problem: {problem}")
    return "\n".join(lines) + "\n"


class _CbfDecodeCommand(gdb.Command):
    """Decode a Swift Compact Backtrace Format record in memory, symbolized with GDB.

Usage: unwindkit cbf decode ADDR [LEN]
ADDR is any expression (an array such as a global `blob` means its address). Without LEN,
reads up to 64 KiB (less at the end of a mapping) and decodes one record, which ends at its
end or trunc instruction. With LEN, decodes every record in the LEN bytes (ring buffers
concatenate them). Each line is one frame, or a run of equal frames (`#2-#9 ... (x8)`):
kind (pc, ra, async, omit, truncated), address, symbol+offset (module) and file:line."""

    def __init__(self):
        super().__init__("unwindkit cbf decode", gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        if len(argv) not in (1, 2):
            raise gdb.GdbError("Usage: unwindkit cbf decode ADDR [LEN]")
        addr = _address_arg(argv[0])
        if len(argv) == 2:
            length = int(gdb.parse_and_eval(argv[1]))
            if length <= 0:
                raise gdb.GdbError("unwindkit: LEN must be positive")
            try:
                data = _read(addr, length)
            except gdb.MemoryError as e:
                raise gdb.GdbError(f"unwindkit: cannot read {length} bytes at {addr:#x}: {e}")
        else:
            data = _read_window(addr, _DEFAULT_WINDOW)
        records = _unwindkit.cbf_decode(data, len(argv) == 2)
        out, offset = [], 0
        for record in records:
            if isinstance(record, str):
                out.append(f"at {addr + offset:#x}: {record}\n")
                break
            if len(records) > 1:
                out.append(f"at {addr + offset:#x}: ")
            out.append(format_record(record))
            offset += record[2]
        gdb.write("".join(out))
        if isinstance(records[-1], str):
            raise gdb.GdbError("unwindkit: not a CBF record (bad info byte)")


def _thread(number):
    for thread in gdb.selected_inferior().threads():
        if thread.num == number:
            return thread
    raise gdb.GdbError(f"unwindkit: no thread {number}")


def _frames_of_selected_thread():
    """[(kind, pc)] of GDB's machine frames, newest first: the newest is a pc, the others
    return addresses, except the frame a signal interrupted (its pc is exact). Inline frames
    (the pc of their machine frame) and tail-call frames (rebuilt from debug info, no
    activation record) are left out. A stack GDB could not finish ends with
    a truncated frame."""
    frames, kind = [], "pc"
    frame = gdb.newest_frame()
    while frame is not None and len(frames) < _MAX_ENCODE_FRAMES:
        if frame.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            frames.append((kind, frame.pc()))
            kind = "pc" if frame.type() == gdb.SIGTRAMP_FRAME else "ra"
        try:
            older = frame.older()
        except gdb.error:
            older = None
        if older is None and frame.unwind_stop_reason() not in (
                gdb.FRAME_UNWIND_NO_REASON, gdb.FRAME_UNWIND_OUTERMOST):
            frames.append(("truncated", 0))
        frame = older
    if frame is not None:
        frames.append(("truncated", 0))
    return frames


class _CbfEncodeCommand(gdb.Command):
    """Encode GDB's backtrace of a thread as Swift Compact Backtrace Format.

Usage: unwindkit cbf encode [-t THREAD] [-o FILE] [--base64]
THREAD is GDB's thread number (default: the selected thread). Prints the bytes as hex (as
base64, the form a Swift Backtrace's JSON holds, with --base64), or writes them to FILE (raw
bytes, or base64 text with --base64), then the size next to the plain size (one machine word
per frame)."""

    def __init__(self):
        super().__init__("unwindkit cbf encode", gdb.COMMAND_STACK, gdb.COMPLETE_FILENAME)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        thread_number, path, as_base64 = None, None, False
        usage = "Usage: unwindkit cbf encode [-t THREAD] [-o FILE] [--base64]"
        while argv:
            opt = argv.pop(0)
            if opt == "--base64":
                as_base64 = True
            elif opt in ("-t", "-o") and argv:
                value = argv.pop(0)
                if opt == "-o":
                    path = value
                elif value.isdigit():
                    thread_number = int(value)
                else:
                    raise gdb.GdbError(usage)
            else:
                raise gdb.GdbError(usage)
        if not gdb.selected_inferior().pid and not gdb.selected_inferior().threads():
            raise gdb.GdbError("unwindkit: no process or core")
        previous = gdb.selected_thread()
        thread = _thread(thread_number) if thread_number is not None else previous
        if thread is None:
            raise gdb.GdbError("unwindkit: no thread selected")
        previous_frame = gdb.selected_frame()
        try:
            thread.switch()
            frames = _frames_of_selected_thread()
            word_bytes = gdb.lookup_type("void").pointer().sizeof
        finally:
            previous.switch()
            previous_frame.select()
        encoded = _unwindkit.cbf_encode(word_bytes * 8, frames)
        if isinstance(encoded, str):
            raise gdb.GdbError(f"unwindkit: {encoded}")
        text = _unwindkit.cbf_to_base64(encoded) if as_base64 else _unwindkit.cbf_to_hex(encoded)
        addresses = sum(1 for kind, _ in frames if kind not in _NOT_ADDRESSES)
        lines = [f"thread {thread.num}: {addresses} frames"]
        if path is None:
            lines.append(f"{'base64' if as_base64 else 'hex'}: {text}")
        else:
            try:
                with open(path, "w" if as_base64 else "wb") as f:
                    f.write(text + "\n" if as_base64 else encoded)
            except OSError as e:
                raise gdb.GdbError(f"unwindkit: cannot write {path}: {e.strerror}")
            lines.append(f"wrote {path}")
        lines.append(f"size: {len(encoded)} bytes (plain: {addresses * word_bytes} bytes)")
        gdb.write("\n".join(lines) + "\n")


class _CbfPrefix(gdb.Command):
    """Swift Compact Backtrace Format: decode from memory, encode a thread's backtrace."""

    def __init__(self):
        super().__init__("unwindkit cbf", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)


def register():
    """Adds the commands; the `unwindkit` prefix must exist already."""
    _CbfPrefix()
    _CbfDecodeCommand()
    _CbfEncodeCommand()
